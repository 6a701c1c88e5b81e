"""The DVC pipeline end to end: real `dvc`, real git, real MLflow, the offline mock models.

A module-scoped fixture copies the repository's pipeline (dvc.yaml, params.yaml, .dvc/config,
configs/, data/ and src/) into a temporary git repository and runs `dvc repro` on the full
default suite there. Every stage command is `PYTHONPATH=src llm-eval ...`, so the copy runs
its own `src/`: editing the copy's scorer is what the scoring test changes. The tests then run
in file order on that one repository; each one that edits it resets it afterwards.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from llm_eval.reporting.metrics import HEADLINE_KEYS
from llm_eval.runner.trace_io import read_rows
from tests.conftest import REPO
from tests.support.suite import SUITE_TASKS

pytestmark = pytest.mark.slow

MODELS = ("mock-varied", "mock-flaky")
ALL_STAGES = {
    "validate",
    "run@mock-varied",
    "run@mock-flaky",
    "score@mock-varied",
    "score@mock-flaky",
    "report",
}
COPIED = (
    "params.yaml",
    "dvc.yaml",
    ".dvcignore",
    ".gitignore",
    ".dvc/config",
    ".dvc/.gitignore",
    ".dvc/plots/accuracy_interval.json",
    ".dvc/plots-page.html",
    "reviews/verdicts.jsonl",
)
COPIED_DIRS = ("configs", "data", "src")
PUBLISHED = (
    "results/validation.json",
    "results/run_inputs.json",
    "results/summary.json",
    "reports/report.md",
    *(f"results/metrics/{m}.json" for m in MODELS),
    *(f"results/traces/{m}.jsonl" for m in MODELS),
    *(f"results/scored/{m}.jsonl" for m in MODELS),
    *(f"results/details/{m}.json" for m in MODELS),
    "results/plots/models.json",
    *(
        f"docs/images/{c}.svg"
        for c in (
            "language-accuracy",
            "language-latency",
            "aimo3-accuracy",
            "benchmark-heatmap",
            "accuracy-cost",
            "accuracy-latency",
        )
    ),
)
QUEUE_TIMEOUT_S = 1800


def pipeline_env() -> dict[str, str]:
    """This venv's tools first on PATH, tracking on, nothing inherited from DVC or MLflow."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DVC_", "MLFLOW_"))}
    env.pop("PYTHONPATH", None)
    env.update(
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        LLM_EVAL_TRACKING="1",
        DVC_NO_ANALYTICS="1",
        GIT_AUTHOR_NAME="test",
        GIT_AUTHOR_EMAIL="test@example.invalid",
        GIT_COMMITTER_NAME="test",
        GIT_COMMITTER_EMAIL="test@example.invalid",
    )
    return env


def sh(cwd: Path, *args: str, timeout: float = 1800, check: bool = True) -> str:
    """Run a command in `cwd`; return stdout+stderr, failing the test on a non-zero exit."""
    done = subprocess.run(
        args, cwd=cwd, env=pipeline_env(), capture_output=True, text=True, timeout=timeout
    )
    output = done.stdout + done.stderr
    if check:
        assert done.returncode == 0, f"{' '.join(args)} exited {done.returncode}:\n{output}"
    return output


def dvc(cwd: Path, *args: str, timeout: float = 1800, check: bool = True) -> str:
    return sh(cwd, sys.executable, "-m", "dvc", *args, timeout=timeout, check=check)


def git(cwd: Path, *args: str) -> str:
    return sh(cwd, "git", *args)


def stages_run(output: str) -> set[str]:
    """Stages a `dvc repro` really ran (not skipped, not restored from the run-cache)."""
    return set(re.findall(r"Running stage '([^']+)'", output))


def copy_pipeline(destination: Path) -> Path:
    """The repository's pipeline files, as a fresh git repository with one commit."""
    destination.mkdir(parents=True)
    for name in COPIED:
        (destination / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, destination / name)
    for name in COPIED_DIRS:
        shutil.copytree(
            REPO / name, destination / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
        )
    git(destination, "init", "-q", "-b", "main")
    git(destination, "add", "-A")
    git(destination, "commit", "-q", "-m", "pipeline")
    return destination


def reset(repo: Path) -> None:
    """Back to the last commit: git files, then DVC-cached outputs from the cache."""
    git(repo, "reset", "-q", "--hard")
    dvc(repo, "checkout", "-q")


def file_bytes(root: Path) -> dict[str, bytes]:
    return {name: (root / name).read_bytes() for name in PUBLISHED}


@dataclass
class Pipeline:
    """The temporary repository after its first `dvc repro`."""

    repo: Path
    first_output: str
    first_seconds: float

    @property
    def tracking_uri(self) -> str:
        return f"sqlite:///{self.repo / 'mlruns' / 'mlflow.db'}"

    def client(self) -> Any:
        from mlflow import MlflowClient

        return MlflowClient(tracking_uri=self.tracking_uri)

    def runs(self) -> tuple[str, list[Any]]:
        client = self.client()
        experiment = client.get_experiment_by_name("llm-eval")
        assert experiment is not None
        return experiment.experiment_id, client.search_runs(
            [experiment.experiment_id], max_results=1000
        )


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pipeline]:
    repo = copy_pipeline(tmp_path_factory.mktemp("dvc") / "repo")
    started = time.perf_counter()
    output = dvc(repo, "repro")
    seconds = time.perf_counter() - started
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "first repro")
    yield Pipeline(repo, output, seconds)


def test_stage_commands_run_the_copys_own_code(pipeline: Pipeline) -> None:
    out = sh(
        pipeline.repo,
        "sh",
        "-c",
        "PYTHONPATH=src python -c 'import llm_eval; print(llm_eval.__file__)'",
    )
    assert Path(out.strip()).resolve() == (pipeline.repo / "src/llm_eval/__init__.py").resolve()


def test_first_repro_runs_every_stage_on_the_full_suite(pipeline: Pipeline) -> None:
    assert stages_run(pipeline.first_output) == ALL_STAGES
    assert "warning" not in pipeline.first_output.lower(), pipeline.first_output
    for model in MODELS:
        lines = (pipeline.repo / f"results/traces/{model}.jsonl").read_text().splitlines()
        assert len(lines) == SUITE_TASKS
        metrics = json.loads((pipeline.repo / f"results/metrics/{model}.json").read_text())
        assert set(metrics) == set(HEADLINE_KEYS), "the per-model file is the flat headline only"
        details = json.loads((pipeline.repo / f"results/details/{model}.json").read_text())
        assert details["overall"]["total"] == SUITE_TASKS
    summary = json.loads((pipeline.repo / "results/summary.json").read_text())
    assert set(summary) == set(MODELS)
    assert git(pipeline.repo, "status", "--porcelain") == ""
    # cached outputs are git-ignored (pushable through DVC); the published ones are committed
    tracked = git(pipeline.repo, "ls-files").split()
    assert "reports/report.md" in tracked and "results/metrics/mock-varied.json" in tracked
    assert "results/traces/mock-varied.jsonl" not in tracked


def test_second_repro_runs_nothing(pipeline: Pipeline) -> None:
    output = dvc(pipeline.repo, "repro")
    assert stages_run(output) == set()
    assert "Data and pipelines are up to date" in dvc(pipeline.repo, "status")


def test_mlflow_has_a_run_per_stage_with_metrics_parent_and_traces(pipeline: Pipeline) -> None:
    experiment_id, runs = pipeline.runs()
    # MLflow names a model's run `<stage>:<model> @ <label>`; DVC names its stage
    # `<stage>@<model>`.
    by_name = {r.info.run_name.split(" @ ")[0].replace(":", "@"): r for r in runs}
    assert set(by_name) >= ALL_STAGES
    names = {r.info.run_name.split(" @ ")[0] for r in runs}
    assert names >= {"run:mock-varied", "score:mock-flaky", "report"}
    staged = [
        r
        for r in runs
        if r.data.tags.get("dvc.stage") in ALL_STAGES
        and r.data.tags.get("llm_eval.stage") != "pipeline"
    ]
    parents = {r.data.tags["mlflow.parentRunId"] for r in staged}
    assert len(parents) == 1, "all stages of one dvc repro share one parent run"
    parent = next(r for r in runs if r.info.run_id in parents)
    assert parent.data.tags["llm_eval.stage"] == "pipeline"
    commit = git(pipeline.repo, "rev-parse", "HEAD~1").strip()  # the commit repro ran on
    client = pipeline.client()
    for name in ALL_STAGES:
        run = by_name[name]
        assert run.info.status == "FINISHED"
        assert run.data.tags["git.commit"] == commit
        assert run.data.tags["dvc.stage"] == name
        assert run.data.tags["llm_eval.stage"] == name.split("@")[0]
        assert run.data.tags["llm_eval.source"] == "dvc"
    for model in MODELS:
        for stage in ("run", "score"):
            metrics = by_name[f"{stage}@{model}"].data.metrics
            assert metrics["overall/total"] == SUITE_TASKS
            assert 0 <= metrics["strict_accuracy"] <= 1
            assert 0 <= metrics["language_understanding/strict_accuracy"] <= 1
        traces = client.search_traces(
            locations=[experiment_id],
            run_id=by_name[f"run@{model}"].info.run_id,
            max_results=1000,
            include_spans=False,
        )
        assert len(traces) == SUITE_TASKS
        assert all([a.name for a in trace.info.assessments] == ["correct"] for trace in traces), (
            "the score stage logged one verdict per trace"
        )
    assert by_name["report"].data.metrics["mock-varied/strict_accuracy"] == 1.0
    assert by_name["validate"].data.metrics["active_tasks"] == SUITE_TASKS
    artifacts = {a.path for a in client.list_artifacts(by_name["report"].info.run_id, "charts")}
    assert "charts/benchmark-heatmap.svg" in artifacts


def test_mlflow_server_answers_its_rest_api(pipeline: Pipeline) -> None:
    experiment_id, runs = pipeline.runs()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mlflow",
            "server",
            "--backend-store-uri",
            pipeline.tracking_uri,
            "--default-artifact-root",
            (pipeline.repo / "mlruns" / "artifacts").as_uri(),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            "1",
        ],
        cwd=pipeline.repo,
        env=pipeline_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        wait_for(f"{base}/health", server)
        request = urllib.request.Request(
            f"{base}/api/2.0/mlflow/runs/search",
            data=json.dumps({"experiment_ids": [experiment_id], "max_results": 1000}).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            found = json.loads(response.read())["runs"]
        assert {r["info"]["run_id"] for r in found} == {r.info.run_id for r in runs}
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)


def wait_for(url: str, process: subprocess.Popen[Any], timeout_s: float = 90) -> None:
    """Poll `url` until it answers 200 (the server process must stay alive meanwhile)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert process.poll() is None, "the MLflow server exited"
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    pytest.fail(f"{url} did not answer within {timeout_s} s")


def test_one_models_temperature_reruns_only_its_stages(pipeline: Pipeline) -> None:
    repo = pipeline.repo
    models_path = repo / "configs" / "models.yaml"
    models = yaml.safe_load(models_path.read_text(encoding="utf-8"))
    models["models"]["mock-varied"]["temperature"] = 0.5
    models_path.write_text(yaml.safe_dump(models, sort_keys=False), encoding="utf-8")
    flaky_trace = (repo / "results/traces/mock-flaky.jsonl").read_bytes()
    try:
        output = dvc(repo, "repro")
        # `validate` checks the model catalog too, so it reruns; its output is unchanged, so
        # the other model's stages do not.
        assert stages_run(output) == {
            "validate",
            "run@mock-varied",
            "score@mock-varied",
            "report",
        }
        assert (repo / "results/traces/mock-flaky.jsonl").read_bytes() == flaky_trace
        assert "models.mock-varied.temperature" in dvc(repo, "params", "diff")
    finally:
        reset(repo)


def test_scoring_code_change_rescores_without_calling_models(pipeline: Pipeline) -> None:
    repo = pipeline.repo
    before = file_bytes(repo)
    _, runs_before = pipeline.runs()
    scorer = repo / "src/llm_eval/scoring/__init__.py"
    original = scorer.read_text(encoding="utf-8")
    try:
        # A comment changes the code's hash, not its output: scoring, validation and the
        # report (which load the whole package) rerun and write the same bytes; no model runs.
        scorer.write_text(original + "# touched by test_dvc_pipeline\n", encoding="utf-8")
        output = dvc(repo, "repro")
        assert stages_run(output) == {"validate", "score@mock-varied", "score@mock-flaky", "report"}
        assert file_bytes(repo) == before
        # A change of verdicts reruns scoring and the report, still with no model call.
        scorer.write_text(original + REJECT_ALL, encoding="utf-8")
        output = dvc(repo, "repro")
        assert stages_run(output) == {"validate", "score@mock-varied", "score@mock-flaky", "report"}
        for model in MODELS:
            trace = f"results/traces/{model}.jsonl"
            assert (repo / trace).read_bytes() == before[trace], "a trace changed: a model ran"
            metrics = json.loads((repo / f"results/metrics/{model}.json").read_text())
            assert metrics["strict_accuracy"] == 0
        assert "mock-varied.strict_accuracy" in dvc(repo, "metrics", "diff")
        _, runs_after = pipeline.runs()
        new = [r for r in runs_after if r.info.run_id not in {x.info.run_id for x in runs_before}]
        assert sorted(r.data.tags["llm_eval.stage"] for r in new).count("run") == 0
    finally:
        reset(repo)


def test_a_key_fix_in_data_rescores_without_calling_models(pipeline: Pipeline) -> None:
    repo = pipeline.repo
    before = file_bytes(repo)
    _, runs_before = pipeline.runs()
    tasks = repo / "data" / "sample_math.jsonl"
    lines = tasks.read_text(encoding="utf-8").splitlines()
    fixed = json.loads(lines[0])
    old_answer, fixed["answer"] = fixed["answer"], str(int(fixed["answer"]) + 1)
    lines[0] = json.dumps(fixed, ensure_ascii=False)
    try:
        tasks.write_text("\n".join(lines) + "\n", encoding="utf-8")
        output = dvc(repo, "repro")
        # `validate` checks data/ and writes the same run inputs, so no `run` stage starts.
        assert stages_run(output) == {"validate", "score@mock-varied", "score@mock-flaky", "report"}
        assert "verdict(s) changed because the key changed" in output
        for name in ("results/run_inputs.json", *(f"results/traces/{m}.jsonl" for m in MODELS)):
            assert (repo / name).read_bytes() == before[name], f"{name} changed: a model ran"
        scored = read_rows(repo / "results/scored/mock-varied.jsonl")
        (row,) = [r for r in scored if (r.benchmark, r.task_id) == ("sample_math", fixed["id"])]
        assert (row.status, row.answer) == ("incorrect", fixed["answer"])
        assert row.run_key is not None and row.run_key.answer == old_answer
        metrics = json.loads((repo / "results/metrics/mock-varied.json").read_text())
        assert metrics["strict_accuracy"] < 1
        assert "mock-varied.strict_accuracy" in dvc(repo, "metrics", "diff")
        _, runs_after = pipeline.runs()
        new = [r for r in runs_after if r.info.run_id not in {x.info.run_id for x in runs_before}]
        assert [r.data.tags["llm_eval.stage"] for r in new].count("run") == 0
    finally:
        reset(repo)


def test_a_review_rescores_by_repro_without_calling_models(pipeline: Pipeline) -> None:
    """A person's verdict in reviews/verdicts.jsonl reruns `score` and `report` only."""
    from llm_eval.runner.trace_io import read_rows
    from llm_eval.scoring.reviews import REVIEWS_FILE, Review, append_records, review_key

    repo = pipeline.repo
    before = file_bytes(repo)
    scored = repo / "results/scored/mock-flaky.jsonl"
    wrong = next(row for row in read_rows(scored) if row.status == "incorrect")
    benchmark, task_id, answer, digest = review_key(wrong)
    decision = Review(
        benchmark=benchmark, task_id=task_id, answer=answer, reply_sha256=digest,
        verdict="correct", reviewer="tester", timestamp="2026-12-06T06:00:00+00:00",
    )  # fmt: skip
    try:
        append_records(repo / REVIEWS_FILE, [decision])
        output = dvc(repo, "repro")
        assert stages_run(output) == {"score@mock-varied", "score@mock-flaky", "report"}
        for model in MODELS:
            trace = f"results/traces/{model}.jsonl"
            assert (repo / trace).read_bytes() == before[trace], "a trace changed: a model ran"
        (reviewed,) = [row for row in read_rows(scored) if row.key == wrong.key]
        assert reviewed.status == "correct"
        assert reviewed.score is not None and reviewed.score.source == "human"
        assert "mock-flaky.strict_accuracy" in dvc(repo, "metrics", "diff")
    finally:
        reset(repo)


REJECT_ALL = """
# test_dvc_pipeline: a scorer change that rejects everything. It wraps the lookup instead of
# reading the registry here: reading it would load the package's modules while this one is
# still being imported.
_test_original_lookup = SCORER_KINDS.lookup


def _test_reject_all(kind):
    found = _test_original_lookup(kind)
    return lambda response, key: found(response, key).model_copy(
        update={"correct": False, "verdict": "incorrect", "unsure_reason": None, "method": "test"}
    )


SCORER_KINDS.lookup = _test_reject_all
"""


def test_push_then_fresh_clone_and_pull_restores_everything(
    pipeline: Pipeline, tmp_path: Path
) -> None:
    repo = pipeline.repo
    dvc(repo, "remote", "add", "-d", "elsewhere", str(tmp_path / "remote"))
    git(repo, "commit", "-q", "-am", "dvc remote")
    assert "pushed" in dvc(repo, "push")
    clone = tmp_path / "clone"
    sh(tmp_path, "git", "clone", "-q", str(repo), str(clone))
    assert not (clone / "results/traces/mock-varied.jsonl").exists()
    dvc(clone, "pull")
    assert file_bytes(clone) == file_bytes(repo)
    assert "Data and pipelines are up to date" in dvc(clone, "status")


def test_two_queued_experiments_run_in_parallel(pipeline: Pipeline) -> None:
    repo = pipeline.repo
    # The README's form: configs/models.yaml lists the mock models' temperature, so `-S` with
    # the file's name overrides it.
    for name, value in (("temp-03", "0.3"), ("temp-07", "0.7")):
        dvc(
            repo,
            "exp",
            "run",
            "--queue",
            "--name",
            name,
            "-S",
            f"configs/models.yaml:models.mock-varied.temperature={value}",
        )
    start_workers(repo, 2)
    try:
        wait_for_queue(repo)
    finally:
        dvc(repo, "queue", "stop", check=False)
    status = dvc(repo, "queue", "status")
    assert status.count("Success") == 2, status
    shown = json.loads(dvc(repo, "exp", "show", "--json"))
    experiments = {exp["name"]: exp for exp in walk_experiments(shown)}
    assert {"temp-03", "temp-07"} <= set(experiments)
    for name, value in (("temp-03", 0.3), ("temp-07", 0.7)):
        data = experiments[name]["data"]
        params = data["params"]["configs/models.yaml"]["data"]
        assert params["models"]["mock-varied"]["temperature"] == value
        metrics = data["metrics"]["results/summary.json"]["data"]
        assert 0 <= metrics["mock-varied"]["strict_accuracy"] <= 1
    # Both experiments logged to the real repository's store (DVC_ROOT), each under its own
    # parent run tagged with its experiment name.
    _, runs = pipeline.runs()
    for name in ("temp-03", "temp-07"):
        mine = [r for r in runs if r.data.tags.get("dvc.exp_name") == name]
        stages = sorted(r.data.tags["llm_eval.stage"] for r in mine)
        assert stages == ["pipeline", "report", "run", "score", "validate"], stages
        parent = next(r for r in mine if r.data.tags["llm_eval.stage"] == "pipeline")
        assert all(
            r.data.tags.get("mlflow.parentRunId") == parent.info.run_id
            for r in mine
            if r is not parent
        )
    # Two at a time: each experiment's MLflow runs, from its first stage's start to its last
    # stage's end, as the store recorded them, overlap the other's (not a duration check).
    spans = [experiment_span(runs, name) for name in ("temp-03", "temp-07")]
    assert max(s[0] for s in spans) < min(s[1] for s in spans), f"ran one after the other: {spans}"
    exps = repo / ".dvc" / "tmp" / "exps"
    assert not list(exps.rglob("mlruns")), "a queued copy must log to DVC_ROOT, not to itself"
    assert (exps / "celery" / "dvc-exp-worker-2.out").is_file(), "-j 2 started a second worker"
    for log in exps.glob("run/*/*.out"):
        assert "warning: MLflow tracking" not in log.read_text(encoding="utf-8", errors="replace")


def experiment_span(runs: list[Any], name: str) -> tuple[int, int]:
    """(first start, last end) in ms of the MLflow runs tagged with experiment `name`."""
    mine = [r for r in runs if r.data.tags.get("dvc.exp_name") == name]
    assert all(r.info.end_time for r in mine), f"{name}: a run has not ended"
    return min(r.info.start_time for r in mine), max(r.info.end_time for r in mine)


def start_workers(repo: Path, jobs: int) -> None:
    """`dvc queue start -j N`, output to a file: its daemon workers would hold a pipe open."""
    log = repo / ".dvc" / "tmp" / "queue-start.log"
    with log.open("w") as handle:
        done = subprocess.run(
            [sys.executable, "-m", "dvc", "queue", "start", "-j", str(jobs)],
            cwd=repo,
            env=pipeline_env(),
            stdin=subprocess.DEVNULL,
            stdout=handle,
            stderr=subprocess.STDOUT,
            timeout=120,
        )
    assert done.returncode == 0, log.read_text()


def wait_for_queue(repo: Path) -> None:
    """Wait (bounded) until no queued experiment is queued or running."""
    deadline = time.monotonic() + QUEUE_TIMEOUT_S
    while time.monotonic() < deadline:
        status = dvc(repo, "queue", "status")
        if not re.search(r"\b(Queued|Running)\b", status):
            return
        time.sleep(2)
    pytest.fail(f"queued experiments did not finish in {QUEUE_TIMEOUT_S} s:\n{status}")


def walk_experiments(node: Any) -> Iterator[dict[str, Any]]:
    """Every experiment revision in `dvc exp show --json` output that has a name and data."""
    if isinstance(node, dict):
        if node.get("name") and isinstance(node.get("data"), dict):
            yield node
        for value in node.values():
            yield from walk_experiments(value)
    elif isinstance(node, list):
        for item in node:
            yield from walk_experiments(item)
