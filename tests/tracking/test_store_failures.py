"""A tracking store that does not answer, or is locked by another program: the stage ends,
in one line, and the record can be written later.

Real parts only: a socket server on 127.0.0.1 that accepts connections and never answers, a
SQLite store held under an exclusive lock by a second connection, the real CLI.
"""

from __future__ import annotations

import socket
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from llm_eval.runner.trace_io import read_rows
from tests.tracking.test_record import read_record
from tests.tracking.test_tracking import cli_env, llm_eval, make_suite

pytestmark = pytest.mark.slow


@pytest.fixture
def silent_server() -> Iterator[str]:
    """An HTTP URL whose server accepts every connection and never sends a byte."""
    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            held.append(connection)  # kept open, never read, never answered

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join()
        for connection in held:
            connection.close()
        listener.close()


def test_a_server_that_never_answers_ends_the_stage_with_one_warning(
    tmp_path: Path, silent_server: str
) -> None:
    root = make_suite(tmp_path / "suite")
    ran = llm_eval(root, "run", "--model", "mock-varied", "--benchmark", "sample_logic",
                   "--output", "t.jsonl", LLM_EVAL_TRACKING="0")  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    # MLflow's own defaults (120 s per request, 7 retries) held such a stage for 20 minutes;
    # the subprocess timeout (240 s) is what fails this test on them.
    scored = subprocess.run(
        [sys.executable, "-m", "llm_eval.cli", "score", "--results", "t.jsonl"],
        cwd=root,
        env=cli_env(MLFLOW_TRACKING_URI=silent_server),
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert scored.returncode == 0, scored.stderr
    lines = scored.stderr.strip().splitlines()
    assert len(lines) == 1, scored.stderr
    assert lines[0].startswith("warning: MLflow tracking of stage 'score' failed"), lines[0]
    assert "llm-eval track" in lines[0]
    assert all(row.score is not None for row in read_rows(root / "t.jsonl"))
    # Later, with a store that answers, `track` publishes the record from the rows.
    published = llm_eval(root, "track", "t.jsonl", "--scored")
    assert published.returncode == 0, published.stdout + published.stderr
    read_record(root).assert_whole(read_rows(root / "t.jsonl"), scored=True)


def test_a_store_locked_by_another_program_says_so_in_one_line(tmp_path: Path) -> None:
    root = make_suite(tmp_path / "suite")
    ran = llm_eval(root, "run", "--model", "mock-varied", "--benchmark", "sample_logic",
                   "--output", "t.jsonl")  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    holder = sqlite3.connect(root / "mlruns" / "mlflow.db", check_same_thread=False)
    holder.execute("BEGIN EXCLUSIVE")  # another program writing, for as long as it likes
    proc = subprocess.Popen(
        [sys.executable, "-m", "llm_eval.cli", "score", "--results", "t.jsonl"],
        cwd=root,
        env=cli_env(PYTHONUNBUFFERED="1"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    # The first thing the stage says about the lock is the cue to let go of it.
    first = proc.stderr.readline()
    timer = threading.Timer(1.0, holder.rollback)
    timer.start()
    rest = proc.stderr.read()
    proc.wait(timeout=300)
    timer.join()
    holder.close()
    stderr = first + rest
    assert proc.returncode == 0, stderr
    assert "Traceback" not in stderr and "ERROR" not in stderr, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "locked" in lines[0], stderr
    read_record(root).assert_whole(read_rows(root / "t.jsonl"), scored=True)
