"""docs/team.md's two blocks, run as written in two fresh clones: server, then each clone.

The server block starts PostgreSQL from the `server` extra's binaries and `mlflow server` on
it (free ports replace 5433 and 5000; nothing else changes). Each clone is a fresh `git clone`
of a repository whose pipeline selects two benchmarks (to keep it cheap); the second clone
commits another seed for `mock-flaky` first, so the two clones' results differ. Then: both
clones' stage runs and verdicts are on the server, the shared DVC remote holds both clones'
trace files, and a client whose Host the server does not list fails in one line.
`uv run X` runs X from this environment and `uv sync` does nothing (a shim on PATH).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO
from tests.pipeline.test_dvc_pipeline import copy_pipeline, git, pipeline_env, sh
from tests.tracking.test_team_server import free_port

pytestmark = pytest.mark.slow

MARKER = "<!-- verbatim: tests/tracking/test_team_block.py"


def team_blocks() -> list[str]:
    text = (REPO / "docs/team.md").read_text(encoding="utf-8")
    return re.findall(re.escape(MARKER) + r"[^\n]*-->\n```bash\n(.*?)```", text, flags=re.S)


def shim(folder: Path) -> Path:
    folder.mkdir()
    uv = folder / "uv"
    uv.write_text(
        "#!/usr/bin/env bash\n"
        '[ "$1" = sync ] && exit 0\n'
        '[ "$1" = run ] || { echo "uv shim: only uv run and uv sync" >&2; exit 2; }\n'
        "shift\n"
        f'[ "$1" = dvc ] && {{ shift; exec "{sys.executable}" -m dvc "$@"; }}\n'
        f'[ "$1" = python ] && {{ shift; exec "{sys.executable}" "$@"; }}\n'
        'exec "$@"\n'
    )
    uv.chmod(0o755)
    return folder


def block_env(bin_dir: Path) -> dict[str, str]:
    env = pipeline_env()
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    return env


def start_block(block: str, cwd: Path, bin_dir: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        ["bash", "-euo", "pipefail", "-c", block], cwd=cwd, env=block_env(bin_dir),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip


def finish(proc: subprocess.Popen[str], block: str, timeout: float = 3000) -> str:
    output, _ = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, f"block failed:\n{block}\n--- output ---\n{output}"
    return output


def wait_for_health(url: str, log: Path) -> None:
    for _ in range(1200):  # creating the schema on a loaded machine takes a while
        with (
            contextlib.suppress(OSError),
            urllib.request.urlopen(f"{url}/health", timeout=2) as answer,
        ):
            if answer.status == 200:
                return
        time.sleep(0.5)
    raise AssertionError(f"mlflow server never answered:\n{log.read_text()}")


@contextlib.contextmanager
def stopped_afterwards(folder: Path) -> Iterator[None]:
    """Stop what the server block started: the tracking server (its pid file), PostgreSQL."""
    try:
        yield
    finally:
        pid_file = folder / "mlflow-server.pid"
        if pid_file.exists():
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(pid_file.read_text().strip()), signal.SIGTERM)
        subprocess.run(
            [sys.executable, "-m", "llm_eval.tracking.team_postgres", "stop", "--data",
             str(folder / "llm-eval-pg")], capture_output=True, timeout=300,
        )  # fmt: skip


def remote_holds(remote: Path, clone: Path, path: str) -> bool:
    """Whether the DVC remote has the file `path` of `clone` (by its md5 in dvc.lock)."""
    lock = (clone / "dvc.lock").read_text(encoding="utf-8")
    found = re.findall(rf"- path: {re.escape(path)}\n\s+hash: md5\n\s+md5: (\w+)", lock)
    (md5,) = set(found)  # an out of one stage is a dep of the next: the same hash
    return (remote / "files" / "md5" / md5[:2] / md5[2:]).is_file()


@pytest.fixture()
def team_folder() -> Iterator[Path]:
    """The folder of the clones, the PostgreSQL data and the shared remote. Not under pytest's
    own temporary root: PostgreSQL runs as `nobody` when the tests run as root, and a pytest
    starting meanwhile makes that root private again (0700), cutting `nobody` off."""
    folder = Path(tempfile.mkdtemp(prefix="llm-eval-team-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_the_team_blocks_work_as_written_in_two_fresh_clones(team_folder: Path) -> None:
    from mlflow import MlflowClient

    tmp_path = team_folder
    server_block, clone_block = team_blocks()
    pg_port, http_port = free_port(), free_port()
    server_block = server_block.replace("5433", str(pg_port)).replace("5000", str(http_port))
    clone_block = clone_block.replace("5000", str(http_port))
    url = f"http://127.0.0.1:{http_port}"
    bin_dir = shim(tmp_path / "bin")

    origin = copy_pipeline(tmp_path / "origin")
    params = origin / "params.yaml"
    params.write_text(
        params.read_text(encoding="utf-8").replace(
            "benchmarks: []", "benchmarks: [language_understanding, aimo3_reference]"
        ),
        encoding="utf-8",
    )
    git(origin, "commit", "-q", "-am", "one benchmark")
    first, second = tmp_path / "llm-eval", tmp_path / "llm-eval-2"
    for clone in (first, second):
        sh(tmp_path, "git", "clone", "-q", str(origin), str(clone))
    models_path = second / "configs/models.yaml"
    models = yaml.safe_load(models_path.read_text(encoding="utf-8"))
    models["models"]["mock-flaky"]["seed"] = 7
    models_path.write_text(yaml.safe_dump(models, sort_keys=False), encoding="utf-8")
    git(second, "commit", "-q", "-am", "another draw of the flaky model")

    with stopped_afterwards(tmp_path):
        finish(start_block(server_block, first, bin_dir), server_block, timeout=600)
        wait_for_health(url, tmp_path / "mlflow-server.log")
        running = [start_block(clone_block, clone, bin_dir) for clone in (first, second)]
        for proc in running:
            finish(proc, clone_block)

        client = MlflowClient(tracking_uri=url)
        experiment = client.get_experiment_by_name("llm-eval")
        assert experiment is not None
        runs = client.search_runs([experiment.experiment_id], max_results=500)
        for clone in (first, second):
            commit = git(clone, "rev-parse", "HEAD").strip()
            stages = {
                (run.data.tags.get("llm_eval.stage"), run.data.tags.get("llm_eval.model"))
                for run in runs
                if run.data.tags.get("git.commit") == commit
            }
            for model in ("mock-varied", "mock-flaky"):
                assert {("run", model), ("score", model)} <= stages, (clone, stages)
            files = [str(p) for p in sorted((clone / "results/scored").glob("*.jsonl"))]
            env = {**pipeline_env(), "MLFLOW_TRACKING_URI": url}
            check = subprocess.run(
                [sys.executable, "-m", "llm_eval.cli", "track", *files, "--scored", "--check"],
                cwd=clone, env=env, capture_output=True, text=True, timeout=600,
            )  # fmt: skip
            assert check.returncode == 0, check.stdout + check.stderr
            assert check.stdout.count(": OK") == 2, check.stdout

        remote = tmp_path / "llm-eval-team-dvc"
        flaky = "results/traces/mock-flaky.jsonl"
        assert (first / flaky).read_bytes() != (second / flaky).read_bytes()
        for clone in (first, second):
            assert remote_holds(remote, clone, flaky), clone
            assert remote_holds(remote, clone, "results/scored/mock-flaky.jsonl"), clone

        # A Host the server does not list (`localhost:PORT`): one line, exit 2, nothing run.
        refused = subprocess.run(
            [sys.executable, "-m", "llm_eval.cli", "track", str(first / flaky), "--check"],
            cwd=first, capture_output=True, text=True, timeout=300,
            env={**pipeline_env(), "MLFLOW_TRACKING_URI": f"http://localhost:{http_port}"},
        )  # fmt: skip
        assert refused.returncode == 2, refused.stdout + refused.stderr
        (line,) = refused.stderr.strip().splitlines()
        assert f"HTTP 403 for Host localhost:{http_port}" in line
