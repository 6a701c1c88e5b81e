"""`run --resume` and a key fixed since: the row is rescored, not run again, and the run says so.

Against the real command line and the local OpenAI-compatible stub, which answers "42" to
every question and counts the requests it receives.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llm_eval.runner.trace_io import read_rows
from tests.runner.test_stop_and_rerun import run_cli, stub_root  # noqa: F401 (a fixture)
from tests.support.openai_stub import StubServer

pytestmark = pytest.mark.slow  # CLI subprocesses against a stub server


def set_answer(root: Path, task_id: str, answer: str) -> str:
    """Give `task_id` of sample_math another answer key; return the one it had."""
    path = root / "data" / "sample_math.jsonl"
    tasks = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    (task,) = [t for t in tasks if t["id"] == task_id]
    before, task["answer"] = task["answer"], answer
    path.write_text("".join(json.dumps(t) + "\n" for t in tasks), encoding="utf-8")
    return str(before)


def test_a_row_made_under_another_key_is_rescored_not_rerun_and_said_so(
    stub_root: tuple[Path, StubServer],  # noqa: F811 (the imported fixture)
    tmp_path: Path,
) -> None:
    root, stub = stub_root
    trace = tmp_path / "t.jsonl"
    run = ("run", "--model", "stub", "--benchmark", "sample_math", "--limit", "3", "--no-cache",
           "--output", str(trace))  # fmt: skip
    first = run_cli(root, *run)
    assert first.returncode == 0, first.stderr
    assert stub.total_requests == 3
    assert [row.status for row in read_rows(trace)] == ["incorrect"] * 3  # "42" every time
    old = set_answer(root, "math_002", "42")  # the key is fixed: 42 was right after all

    stub.reset()
    resumed = run_cli(root, *run, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert stub.total_requests == 0, "a key fix called the model again"
    assert "1 finished rows rescored, not run again" in resumed.stdout
    rows = {row.task_id: row for row in read_rows(trace)}
    fixed = rows["math_002"]
    assert (fixed.status, fixed.answer, fixed.response) == ("correct", "42", "42")
    assert fixed.run_key is not None and fixed.run_key.answer == old
    assert rows["math_001"].status == rows["math_003"].status == "incorrect"

    again = run_cli(root, *run, "--resume")  # nothing changed since: nothing to say
    assert again.returncode == 0 and "rescored" not in again.stdout
    assert stub.total_requests == 0
