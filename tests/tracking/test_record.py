"""The MLflow record stays whole: every row traced once, every trace one current verdict.

Real CLI processes on a real SQLite store, read back through `MlflowClient`: a queue-like
pair of experiments scored at once, an ad-hoc run between run and score, scoring twice (and
a verdict that changes), SIGTERM and SIGKILL of a run against a slow local OpenAI-compatible
server followed by `--resume`, `llm-eval track`, and an unusable store.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from llm_eval.runner.trace_io import read_rows
from llm_eval.tracking.identity import key_from_tags
from tests.support.openai_stub import StubConfig, StubServer, start_stub
from tests.tracking.test_tracking import cli_env, llm_eval, make_suite

pytestmark = pytest.mark.slow


@dataclass
class Record:
    """What the store holds for some rows, as MLflow's client shows it."""

    traces_per_row: Counter[tuple[str, ...]]
    current_verdicts: dict[tuple[str, ...], list[Any]]
    runs: list[Any]

    def assert_whole(self, rows: list[Any], *, scored: bool) -> None:
        """Row count = trace count (= current-verdict count): no duplicate, none missing."""
        keys = [(r.run_id, r.model, r.benchmark, r.task_id, str(r.epoch)) for r in rows]
        assert len(set(keys)) == len(keys)
        assert {key: self.traces_per_row[key] for key in keys} == dict.fromkeys(keys, 1)
        if scored:
            for row, key in zip(rows, keys, strict=True):
                (verdict,) = self.current_verdicts[key]
                if row.status == "error":
                    assert verdict.error is not None
                else:
                    assert verdict.value is (row.status == "correct"), key


def read_record(root: Path) -> Record:
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{root / 'mlruns' / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("llm-eval")
    assert experiment is not None
    exp_id = experiment.experiment_id
    traces: list[Any] = []
    token = None
    while True:
        page = client.search_traces(
            locations=[exp_id], max_results=500, page_token=token, include_spans=False
        )
        traces += list(page)
        token = page.token
        if not token:
            break
    per_row: Counter[tuple[str, ...]] = Counter()
    verdicts: dict[tuple[str, ...], list[Any]] = {}
    for trace in traces:
        key = key_from_tags(trace.info.tags)
        assert key is not None
        per_row[key] += 1
        current = [a for a in trace.info.assessments if a.name == "correct" and a.valid]
        verdicts.setdefault(key, []).extend(current)
    runs = client.search_runs([exp_id], max_results=200)
    return Record(per_row, verdicts, runs)


def test_queued_experiments_and_an_ad_hoc_run_keep_their_own_traces(tmp_path: Path) -> None:
    """Two experiments of one model (other settings) scored at once, after an ad-hoc run of
    the same model: each scored row's verdict lands on its own trace, exactly once."""
    root = make_suite(tmp_path / "suite")
    common = ("run", "--model", "mock-varied", "--benchmark", "sample_logic")
    for name, budget in (("a", "512"), ("b", "1024")):
        done = llm_eval(root, *common, "--max-tokens", budget, "--output", f"{name}.jsonl",
                        LLM_EVAL_PIPELINE_ID=f"exp-{name}")  # fmt: skip
        assert done.returncode == 0, done.stderr
    ad_hoc = llm_eval(root, *common, "--max-tokens", "2048", "--output", "adhoc.jsonl")
    assert ad_hoc.returncode == 0, ad_hoc.stderr
    scorings = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "llm_eval.cli",
                "score",
                "--results",
                f"{name}.jsonl",
                "--output",
                f"{name}-scored.jsonl",
            ],
            cwd=root,
            env=cli_env(LLM_EVAL_PIPELINE_ID=f"exp-{name}"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for name in ("a", "b")
    ]
    for proc in scorings:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        assert "warning" not in err.lower(), err
    record = read_record(root)
    for name in ("a", "b"):
        record.assert_whole(read_rows(root / f"{name}-scored.jsonl"), scored=True)
    ad_hoc_rows = read_rows(root / "adhoc.jsonl")
    record.assert_whole(ad_hoc_rows, scored=False)
    assert all(record.current_verdicts[_key(row)] == [] for row in ad_hoc_rows)
    assert sum(record.traces_per_row.values()) == 3 * len(ad_hoc_rows)


def _key(row: Any) -> tuple[str, ...]:
    return (row.run_id, row.model, row.benchmark, row.task_id, str(row.epoch))


def test_scoring_twice_leaves_one_current_verdict_and_the_history(tmp_path: Path) -> None:
    root = make_suite(tmp_path / "suite")
    ran = llm_eval(root, "run", "--model", "mock-varied", "--benchmark", "sample_logic",
                   "--output", "t.jsonl")  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    for _ in range(2):
        done = llm_eval(root, "score", "--results", "t.jsonl")
        assert done.returncode == 0, done.stderr
    rows = read_rows(root / "t.jsonl")
    read_record(root).assert_whole(rows, scored=True)
    # A verdict that changes (the reply now misses) replaces the one before it.
    flipped = rows[0].model_copy(update={"response": "I cannot say."})
    lines = [flipped.model_dump_json(), *(row.model_dump_json() for row in rows[1:])]
    (root / "t.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = llm_eval(root, "score", "--results", "t.jsonl")
    assert done.returncode == 0, done.stderr
    assert "1 earlier verdict(s) replaced" in done.stderr
    rescored = read_rows(root / "t.jsonl")
    assert rescored[0].status != rows[0].status
    record = read_record(root)
    record.assert_whole(rescored, scored=True)
    history = _all_verdicts(root, _key(rescored[0]))
    assert len(history) == 2
    old, new = sorted(history, key=lambda a: a.create_time_ms)
    assert not old.valid and new.valid and new.overrides == old.assessment_id
    check = llm_eval(root, "track", "t.jsonl", "--scored", "--check")
    assert check.returncode == 0, check.stdout + check.stderr
    assert check.stdout.strip().endswith(": OK")


def _all_verdicts(root: Path, key: tuple[str, ...]) -> list[Any]:
    from mlflow import MlflowClient

    from llm_eval.tracking.identity import trace_id_of

    client = MlflowClient(tracking_uri=f"sqlite:///{root / 'mlruns' / 'mlflow.db'}")
    trace = client.get_trace(trace_id_of(key))  # type: ignore[arg-type]
    return [a for a in trace.info.assessments if a.name == "correct"]


def test_track_reports_a_missing_record_and_repairs_it(tmp_path: Path) -> None:
    root = make_suite(tmp_path / "suite")
    ran = llm_eval(root, "run", "--model", "mock-varied", "--benchmark", "sample_logic",
                   "--output", "t.jsonl", LLM_EVAL_TRACKING="0")  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    llm_eval(root, "validate")  # creates the store, with no trace in it
    check = llm_eval(root, "track", "t.jsonl", "--check")
    assert check.returncode == 1
    assert "6 rows, 0 traced, 6 missing trace(s)" in check.stdout
    repair = llm_eval(root, "track", "t.jsonl")
    assert repair.returncode == 0, repair.stdout + repair.stderr
    assert "6 missing trace(s) written" in repair.stderr
    read_record(root).assert_whole(read_rows(root / "t.jsonl"), scored=False)
    unscored = llm_eval(root, "track", "t.jsonl", "--scored", "--check")
    assert unscored.returncode == 1 and "6 missing verdict(s)" in unscored.stdout


# --------------------------------------------------------------------------- interrupted runs


@pytest.fixture(scope="module")
def slow_server() -> Iterator[StubServer]:
    with start_stub(StubConfig(latency_s=0.3)) as stub:
        yield stub


def stub_suite(root: Path, stub: StubServer) -> Path:
    make_suite(root)
    with (root / "configs" / "models.yaml").open("a", encoding="utf-8") as handle:
        handle.write(
            f"\n  stub:\n    provider: litellm\n    model: openai/stub-model\n"
            f"    api_base: {stub.base_url}\n    api_key_env: STUB_API_KEY\n"
        )
    return root


RUN_ARGS = ("run", "--model", "stub", "--benchmark", "sample_logic", "--epochs", "8",
            "--per-model-limit", "1", "--no-cache", "--output", "t.jsonl")  # fmt: skip


def start_run(root: Path, *extra: str) -> subprocess.Popen[str]:
    env = cli_env(STUB_API_KEY="sk-stub-0000000000000000", LITELLM_LOCAL_MODEL_COST_MAP="True")
    return subprocess.Popen(
        [sys.executable, "-m", "llm_eval.cli", *RUN_ARGS, *extra],
        cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def wait_for_rows(path: Path, count: int, proc: subprocess.Popen[str]) -> None:
    """Wait until the trace file holds `count` rows (the run is still going)."""
    for _ in range(1200):
        if path.is_file() and path.read_text(encoding="utf-8").count("\n") >= count:
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.1)
    raise AssertionError(f"{path} never reached {count} rows")


def test_sigterm_ends_the_mlflow_run_killed_with_the_rows_so_far(
    tmp_path: Path, slow_server: StubServer
) -> None:
    root = stub_suite(tmp_path / "suite", slow_server)
    proc = start_run(root)
    wait_for_rows(root / "t.jsonl", 3, proc)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode != 0
    assert "warning" not in err.lower(), err
    rows = read_rows(root / "t.jsonl")
    assert 3 <= len(rows) < 48
    record = read_record(root)
    record.assert_whole(rows, scored=False)
    (run,) = [r for r in record.runs if r.data.tags.get("llm_eval.stage") == "run"]
    assert run.info.status == "KILLED"


def test_sigkill_then_resume_writes_the_lost_traces(
    tmp_path: Path, slow_server: StubServer
) -> None:
    root = stub_suite(tmp_path / "suite", slow_server)
    proc = start_run(root)
    wait_for_rows(root / "t.jsonl", 3, proc)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=60)
    lost = len(read_rows(root / "t.jsonl"))
    resumed = start_run(root, "--resume")
    _, err = resumed.communicate(timeout=600)
    assert resumed.returncode == 0, err
    assert f"{lost} missing trace(s) written (48 rows)" in err
    rows = read_rows(root / "t.jsonl")
    assert len(rows) == 48
    read_record(root).assert_whole(rows, scored=False)
    scored = llm_eval(root, "score", "--results", "t.jsonl")
    assert scored.returncode == 0, scored.stderr
    read_record(root).assert_whole(read_rows(root / "t.jsonl"), scored=True)


def test_a_directory_as_the_store_fails_at_once_in_one_line(tmp_path: Path) -> None:
    root = make_suite(tmp_path / "suite")
    done = llm_eval(root, "run", "--model", "mock-varied", "--benchmark", "sample_logic",
                    "--output", "t.jsonl", MLFLOW_TRACKING_URI=f"sqlite:///{tmp_path}")  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"error: MLflow tracking store sqlite:///{tmp_path} is unusable: {tmp_path} is a "
        "directory, not a database file (fix MLFLOW_TRACKING_URI, or turn tracking off with "
        "LLM_EVAL_TRACKING=0)"
    )
    assert not (root / "t.jsonl").exists()
