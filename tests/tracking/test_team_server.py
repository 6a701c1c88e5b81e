"""A team's set-up for real: PostgreSQL, `mlflow server` on it, two clones at once.

The test starts a real PostgreSQL (the `server` extra's binaries, through
`llm_eval.tracking.team_postgres`), `mlflow server` backed by it, and two copies of the
suite ("clones") that run different models at the same time against that server, then
`score` and `report` in each. Read back through `MlflowClient` over HTTP: every row traced
once, every verdict on its own trace, and `llm-eval track --check` finds nothing missing.
One small run per clone keeps it cheap; the store writes go through MLflow's public API (a
server is not a SQL store).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from llm_eval.runner.trace_io import read_rows
from tests.tracking.test_tracking import cli_env, llm_eval, make_suite

pytestmark = pytest.mark.slow


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def postgres_available() -> bool:
    from llm_eval.tracking.team_postgres import PostgresError, bin_dir

    try:
        bin_dir()
    except PostgresError:
        return False
    return True


@contextlib.contextmanager
def postgres_server() -> Iterator[str]:
    """A fresh PostgreSQL on 127.0.0.1 with an `mlflow` database; yields its SQLAlchemy URI."""
    from llm_eval.tracking import team_postgres

    home = Path(tempfile.mkdtemp(prefix="llm-eval-pg-"))
    try:
        yield team_postgres.start(home / "data", free_port())
    finally:
        team_postgres.stop(home / "data")
        shutil.rmtree(home, ignore_errors=True)


@contextlib.contextmanager
def mlflow_server(backend: str, artifacts: Path) -> Iterator[str]:
    """`mlflow server` on the backend with one worker; yields its URL once it answers."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
    command = [sys.executable, "-m", "mlflow", "server", "--backend-store-uri", backend,
               "--artifacts-destination", str(artifacts), "--host", "127.0.0.1",
               "--port", str(port), "--workers", "1"]  # fmt: skip
    log = (artifacts.parent / "mlflow-server.log").open("w")
    server = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(1200):  # creating the schema on a loaded machine takes a while
            assert server.poll() is None, (artifacts.parent / "mlflow-server.log").read_text()
            with (
                contextlib.suppress(OSError),
                urllib.request.urlopen(f"{url}/health", timeout=2) as answer,
            ):
                if answer.status == 200:
                    break
            time.sleep(0.5)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


@pytest.mark.skipif(not postgres_available(), reason="no PostgreSQL: the server extra")
def test_two_clones_share_a_postgresql_backed_server(tmp_path: Path) -> None:
    from mlflow import MlflowClient

    with postgres_server() as backend, mlflow_server(backend, tmp_path / "artifacts") as url:
        clones = {
            model: make_suite(tmp_path / f"clone-{model}")
            for model in ("mock-varied", "mock-flaky")
        }
        env = {"MLFLOW_TRACKING_URI": url}
        runs = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "llm_eval.cli",
                    "run",
                    "--model",
                    model,
                    "--benchmark",
                    "sample_logic",
                    "--output",
                    "t.jsonl",
                ],
                cwd=root,
                env=cli_env(**env),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )  # fmt: skip
            for model, root in clones.items()
        ]
        for proc in runs:
            _, err = proc.communicate(timeout=600)
            assert proc.returncode in (0, 3), err  # 3: mock-flaky's error rows
            assert "warning" not in err.lower(), err
        for root in clones.values():
            scored = llm_eval(root, "score", "--results", "t.jsonl", **env)
            assert scored.returncode == 0, scored.stderr
            assert "warning" not in scored.stderr.lower(), scored.stderr
            report = llm_eval(root, "report", "--results", "t.jsonl", "--no-charts", **env)
            assert report.returncode == 0, report.stderr
        files = [str(root / "t.jsonl") for root in clones.values()]
        check = llm_eval(tmp_path, "track", *files, "--scored", "--check", **env)
        assert check.returncode == 0, check.stdout + check.stderr
        assert check.stdout.count(": OK") == 2, check.stdout

        client = MlflowClient(tracking_uri=url)
        experiment = client.get_experiment_by_name("llm-eval")
        assert experiment is not None
        traces = client.search_traces(
            locations=[experiment.experiment_id], max_results=500, include_spans=False
        )
        by_key = {}
        for trace in traces:
            tags = trace.info.tags
            key = (tags["llm_eval.model"], tags["llm_eval.benchmark"], tags["llm_eval.task_id"])
            assert key not in by_key, key  # one trace per row
            by_key[key] = trace
        rows = [row for root in clones.values() for row in read_rows(root / "t.jsonl")]
        assert len(by_key) == len(rows)
        for row in rows:
            trace = by_key[(row.model, row.benchmark, row.task_id)]
            (verdict,) = [a for a in trace.info.assessments if a.name == "correct" and a.valid]
            if row.status == "error":
                assert verdict.error is not None
            else:
                assert verdict.value is (row.status == "correct")
        stages = sorted(r.data.tags.get("llm_eval.stage") for r in client.search_runs(
            [experiment.experiment_id]))  # fmt: skip
        assert stages.count("run") == 2 and stages.count("score") == 2
        assert stages.count("report") == 2
