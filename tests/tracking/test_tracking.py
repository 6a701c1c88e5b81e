"""MLflow tracking with the real CLI and a real SQLite store (no mocks of MLflow).

One module-scoped copy of the suite runs `llm-eval run` and `llm-eval score` on a few small
benchmarks with tracking on; the tests then read the store back with `MlflowClient`.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from llm_eval.runner.trace_io import read_rows
from llm_eval.schemas import TraceRow
from llm_eval.tracking.context import is_secret_param, pipeline_key, safe_params
from llm_eval.tracking.traces import plan_spans, to_ns
from tests.conftest import REPO

pytestmark = pytest.mark.slow

SECRET = "sk-test-0123456789abcdefSECRET"
BENCHMARKS = ("sample_tools", "sample_multiturn", "aimo3_reference_multiturn", "sample_logic")


def cli_env(**extra: str) -> dict[str, str]:
    """The environment of a tracked CLI call: no inherited DVC or MLflow settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DVC_", "MLFLOW_"))}
    env.update({"LLM_EVAL_TRACKING": "1", "OPENROUTER_API_KEY": SECRET})
    env.update(extra)
    return env


def llm_eval(root: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`llm-eval ARGS` in `root` with this interpreter."""
    return subprocess.run(
        [sys.executable, "-m", "llm_eval.cli", *args],
        cwd=root,
        env=cli_env(**env),
        capture_output=True,
        text=True,
        timeout=300,
    )


def make_suite(root: Path) -> Path:
    """A copy of params.yaml, configs/ and data/; the mock model gets a secret-named param."""
    root.mkdir(parents=True)
    shutil.copytree(REPO / "configs", root / "configs")
    shutil.copytree(REPO / "data", root / "data")
    shutil.copy(REPO / "params.yaml", root / "params.yaml")
    models_path = root / "configs" / "models.yaml"
    models = yaml.safe_load(models_path.read_text(encoding="utf-8"))
    models["models"]["mock-varied"]["extra_params"] = {"auth_token": SECRET, "top_k": 5}
    models_path.write_text(yaml.safe_dump(models, sort_keys=False), encoding="utf-8")
    return root


@dataclass
class Tracked:
    """The suite copy after a tracked run and score, and what the store holds."""

    root: Path
    rows: list[TraceRow]
    client: Any
    experiment_id: str
    runs: list[Any]

    def run_of(self, stage: str, model: str | None = None) -> Any:
        found = [
            r
            for r in self.runs
            if r.data.tags.get("llm_eval.stage") == stage
            and (model is None or r.data.tags.get("llm_eval.model") == model)
        ]
        assert len(found) == 1, [r.info.run_name for r in self.runs]
        return found[0]


@pytest.fixture(scope="module")
def tracked(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tracked]:
    from mlflow import MlflowClient

    root = make_suite(tmp_path_factory.mktemp("tracking") / "suite")
    bench_args = [arg for name in BENCHMARKS for arg in ("--benchmark", name)]
    ran = llm_eval(
        root,
        "run",
        "--model",
        "mock-varied",
        *bench_args,
        "--output",
        "t.jsonl",
        LLM_EVAL_PIPELINE_ID="pipeline-a",
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "warning" not in ran.stderr.lower(), ran.stderr
    scored = llm_eval(
        root,
        "score",
        "--results",
        "t.jsonl",
        "--output",
        "s.jsonl",
        "--metrics",
        "m.json",
        "--details",
        "d.json",
        LLM_EVAL_PIPELINE_ID="pipeline-a",
    )
    assert scored.returncode == 0, scored.stdout + scored.stderr
    assert "warning" not in scored.stderr.lower(), scored.stderr
    client = MlflowClient(tracking_uri=f"sqlite:///{root / 'mlruns' / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("llm-eval")
    assert experiment is not None
    runs = client.search_runs([experiment.experiment_id], max_results=100)
    yield Tracked(root, read_rows(root / "t.jsonl"), client, experiment.experiment_id, runs)


def test_store_is_sqlite_under_the_root_with_absolute_artifacts(tracked: Tracked) -> None:
    assert (tracked.root / "mlruns" / "mlflow.db").is_file()
    experiment = tracked.client.get_experiment(tracked.experiment_id)
    assert experiment.artifact_location == (tracked.root / "mlruns" / "artifacts").as_uri()


def test_each_stage_is_one_run_tagged_and_nested(tracked: Tracked) -> None:
    run = tracked.run_of("run", "mock-varied")
    score = tracked.run_of("score", "mock-varied")
    parent = tracked.run_of("pipeline")
    for child in (run, score):
        tags = child.data.tags
        assert tags["mlflow.parentRunId"] == parent.info.run_id
        assert tags["git.commit"] == "unknown"  # the copy is not a git repository
        assert tags["dvc.exp_name"] == ""
        assert child.info.status == "FINISHED"
    label = parent.info.run_name.removeprefix("pipeline ")
    assert label == f"no-commit-{parent.data.tags['llm_eval.pipeline_key'][:6]}"  # no git
    assert run.info.run_name == f"run:mock-varied @ {label}"
    assert score.info.run_name == f"score:mock-varied @ {label}"
    assert run.data.tags["llm_eval.source"] == "cli"  # not run by DVC
    assert parent.info.status == "FINISHED"


def test_params_are_flattened_without_secrets(tracked: Tracked) -> None:
    params = tracked.run_of("run", "mock-varied").data.params
    assert params["model.provider"] == "mock"
    assert params["model.extra_params.top_k"] == "5"
    assert params["runner.max_attempts"] == "10"
    assert "model.extra_params.auth_token" not in params
    assert not any(SECRET in value for value in params.values())


def test_metrics_per_benchmark_match_the_metrics_file(tracked: Tracked) -> None:
    metrics = tracked.run_of("score", "mock-varied").data.metrics
    headline = json.loads((tracked.root / "m.json").read_text(encoding="utf-8"))
    for key, value in headline.items():  # the runs list's columns: the flat headline
        if value is not None:
            assert metrics[key] == pytest.approx(value), key
    expected = json.loads((tracked.root / "d.json").read_text(encoding="utf-8"))
    for benchmark in (*BENCHMARKS, "overall"):
        for key in ("valid_accuracy", "strict_accuracy", "correct", "errors", "total", "tokens"):
            assert metrics[f"{benchmark}/{key}"] == pytest.approx(expected[benchmark][key])
        assert f"{benchmark}/mean_latency_s" in metrics
    assert metrics["overall/total"] == len(tracked.rows)


def test_task_table_and_artifacts_are_logged(tracked: Tracked) -> None:
    run_id = tracked.run_of("run", "mock-varied").info.run_id
    paths = {
        a.path
        for folder in ("", "tasks", "traces")
        for a in tracked.client.list_artifacts(run_id, folder or None)
    }
    assert {"tasks/mock-varied.json", "traces/t.jsonl"} <= paths
    local = tracked.client.download_artifacts(run_id, "tasks/mock-varied.json")
    table = json.loads(Path(local).read_text(encoding="utf-8"))
    assert table["columns"][:4] == ["model", "benchmark", "task_id", "category"]
    assert len(table["data"]) == len(tracked.rows)
    score_id = tracked.run_of("score", "mock-varied").info.run_id
    assert {a.path for a in tracked.client.list_artifacts(score_id, "results")} == {
        "results/m.json",
        "results/d.json",
    }


def test_one_trace_per_task_with_llm_and_tool_spans(tracked: Tracked) -> None:
    import mlflow

    run_id = tracked.run_of("run", "mock-varied").info.run_id
    traces = tracked.client.search_traces(
        locations=[tracked.experiment_id], run_id=run_id, max_results=1000
    )
    assert len(traces) == len(tracked.rows)
    mlflow.set_tracking_uri(tracked.client.tracking_uri)
    try:
        frame = mlflow.search_traces(locations=[tracked.experiment_id], run_id=run_id)
    finally:
        mlflow.set_tracking_uri(None)  # type: ignore[arg-type]
    assert len(frame) == len(tracked.rows)
    by_task = {t.info.tags["llm_eval.task_id"]: t for t in traces}
    for row in tracked.rows:
        spans = by_task[row.task_id].data.spans
        llm = [s for s in spans if s.span_type == "CHAT_MODEL"]
        tools = [s for s in spans if s.span_type == "TOOL"]
        assert len(llm) == len(row.calls) and len(tools) == len(row.tool_calls)
        # Simulated rows are placed at logging time; offsets within the row are kept.
        root = next(s for s in spans if s.parent_id is None)
        row_start = to_ns(row.started_at) or 0
        for span, call in zip(sorted(llm, key=lambda s: s.name), row.calls, strict=True):
            if call.started_at:
                offset = (to_ns(call.started_at) or 0) - row_start
                assert span.start_time_ns - root.start_time_ns == offset
            assert span.end_time_ns - span.start_time_ns == pytest.approx(
                call.latency_s * 1e9, abs=2
            )
    assert any(t.data.spans for t in traces if t.info.tags["llm_eval.benchmark"] == "sample_tools")
    assert sum(len(r.tool_calls) for r in tracked.rows) > 0


def test_each_verdict_is_an_assessment_on_its_trace(tracked: Tracked) -> None:
    """Read back through MLflow's client: `correct` feedback from the score stage's rows."""
    run_id = tracked.run_of("run", "mock-varied").info.run_id
    traces = tracked.client.search_traces(
        locations=[tracked.experiment_id], run_id=run_id, max_results=1000
    )
    scored = {(r.benchmark, r.task_id): r for r in read_rows(tracked.root / "s.jsonl")}
    assert len(traces) == len(scored)
    for trace in traces:
        row = scored[(trace.info.tags["llm_eval.benchmark"], trace.info.tags["llm_eval.task_id"])]
        (feedback,) = [a for a in trace.info.assessments if a.name == "correct"]
        assert feedback.source.source_type == "CODE"
        if row.status == "error":
            assert feedback.value is None and feedback.error is not None
        else:
            assert row.score is not None
            assert feedback.value is (row.status == "correct")
            assert feedback.rationale.startswith(f"{row.score.method}: extracted ")
            assert feedback.metadata["method"] == row.score.method


def test_no_secret_in_the_store_or_the_task_tables(tracked: Tracked) -> None:
    database = sqlite3.connect(tracked.root / "mlruns" / "mlflow.db")
    try:
        dump = "\n".join(database.iterdump())  # params, tags, spans, trace metadata: all of it
    finally:
        database.close()
    assert "auth_token" in (tracked.root / "configs" / "models.yaml").read_text(encoding="utf-8")
    assert SECRET not in dump
    for table in (tracked.root / "mlruns" / "artifacts").rglob("tasks/*.json"):
        assert SECRET not in table.read_text(encoding="utf-8")


def test_tracking_off_by_env_or_params(tmp_path: Path) -> None:
    root = make_suite(tmp_path / "suite")
    off = llm_eval(
        root,
        "run",
        "--model",
        "mock-varied",
        "--benchmark",
        "sample_logic",
        "--output",
        "t.jsonl",
        LLM_EVAL_TRACKING="0",
    )
    assert off.returncode == 0, off.stderr
    assert not (root / "mlruns").exists()
    params = yaml.safe_load((root / "params.yaml").read_text(encoding="utf-8"))
    params["tracking"]["enabled"] = False
    (root / "params.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")
    env = cli_env()
    del env["LLM_EVAL_TRACKING"]
    done = subprocess.run(
        [sys.executable, "-m", "llm_eval.cli", "score", "--results", "t.jsonl"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert not (root / "mlruns").exists()


def test_a_broken_store_warns_and_never_fails_the_stage(tmp_path: Path) -> None:
    root = make_suite(tmp_path / "suite")
    done = llm_eval(
        root,
        "run",
        "--model",
        "mock-varied",
        "--benchmark",
        "sample_logic",
        "--output",
        "t.jsonl",
        MLFLOW_TRACKING_URI="sqlite:////proc/llm-eval-no-such-dir/mlflow.db",
    )
    assert done.returncode == 0, done.stderr
    assert "warning: MLflow tracking of stage 'run' failed" in done.stderr
    assert len(read_rows(root / "t.jsonl")) == 6


def test_concurrent_stages_share_a_fresh_store(tracked: Tracked, tmp_path: Path) -> None:
    """Two processes create and write one new SQLite store at once: both runs land."""
    root = tracked.root
    store = tmp_path / "shared"
    uri = f"sqlite:///{store / 'mlflow.db'}"
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "llm_eval.cli",
                "score",
                "--results",
                "t.jsonl",
                "--output",
                f"c{i}.jsonl",
            ],
            cwd=root,
            env=cli_env(MLFLOW_TRACKING_URI=uri, LLM_EVAL_PIPELINE_ID=f"c{i}"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(2)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        assert "warning" not in err.lower(), err
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name("llm-eval")
    runs = client.search_runs([experiment.experiment_id], max_results=100)
    assert sorted(r.data.tags["llm_eval.stage"] for r in runs) == [
        "pipeline",
        "pipeline",
        "score",
        "score",
    ]
    assert len({r.info.run_name for r in runs}) == 4  # two executions, told apart by name


def test_parent_key_separates_executions() -> None:
    base = pipeline_key("abc", None, "digest", "dvc:1:2")
    assert base == pipeline_key("abc", None, "digest", "dvc:1:2")
    assert base != pipeline_key("abc", "exp-1", "digest", "dvc:1:2")
    assert base != pipeline_key("abc", None, "other", "dvc:1:2")
    assert base != pipeline_key("abc", None, "digest", "dvc:9:2")


def test_secret_params_are_dropped_but_key_variable_names_kept() -> None:
    assert is_secret_param("model.api_key") and is_secret_param("model.extra_params.token")
    assert not is_secret_param("model.api_key_env")
    params = safe_params(
        {
            "api_key_env": "OPENROUTER_API_KEY",
            "secret": "x",
            "api_base": f"https://h/v1?key={SECRET}",
        },
        "model",
    )
    assert params["model.api_key_env"] == "OPENROUTER_API_KEY"
    assert "model.secret" not in params
    assert SECRET not in params["model.api_base"]


def test_span_plan_places_tool_calls_after_their_model_call(tracked: Tracked) -> None:
    row = next(r for r in tracked.rows if r.tool_calls and r.status != "error")
    plan = plan_spans(row)
    llm = [s for s in plan.children if s.span_type == "CHAT_MODEL"]
    tools = [s for s in plan.children if s.span_type == "TOOL"]
    assert tools[0].start_ns >= llm[0].end_ns
    assert len(llm) > 1 and tools[-1].end_ns <= llm[-1].start_ns + 10**9
    assert plan.root.start_ns <= min(s.start_ns for s in plan.children)
    assert plan.root.end_ns >= max(s.end_ns for s in plan.children)


def test_the_parent_run_carries_each_models_headline(tracked: Tracked) -> None:
    """The runs list shows parent runs first (children folded): the headline is there."""
    metrics = tracked.run_of("pipeline").data.metrics
    headline = json.loads((tracked.root / "m.json").read_text(encoding="utf-8"))
    for key, value in headline.items():
        if value is not None:
            assert metrics[f"mock-varied/{key}"] == pytest.approx(value), key
