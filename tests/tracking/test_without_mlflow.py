"""On the local store MLflow made, `run` and `score` record themselves without importing
MLflow, and the record MLflow's client reads back is whole.

Each tracked command runs with `python -X importtime`, which names every module the process
imports on its standard error. `validate` (the first stage of the pipeline) creates the store
through MLflow; the stages after it must import neither MLflow nor SQLAlchemy, and what they
wrote (runs, params, metrics, task tables, artifacts, one trace and one current verdict per
row) is then read through `MlflowClient`.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from llm_eval.runner.trace_io import read_rows
from tests.tracking.test_record import read_record
from tests.tracking.test_tracking import cli_env, make_suite

pytestmark = pytest.mark.slow

IMPORTED = re.compile(r"^import time:\s+\d+ \|\s+\d+ \|\s+(\S+)", re.MULTILINE)


def imported_modules(root: Path, *args: str, **env: str) -> set[str]:
    """Run `llm-eval ARGS` (tracking on) and return the top-level modules it imported."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "llm_eval.cli", *args],
        cwd=root,
        env=cli_env(**env),
        capture_output=True,
        text=True,
        timeout=300,
    )
    said = "\n".join(
        line for line in done.stderr.splitlines() if not line.startswith("import time:")
    )
    assert done.returncode == 0, said[-3000:]
    assert "warning" not in said.lower(), said[-3000:]
    return {name.split(".")[0] for name in IMPORTED.findall(done.stderr)}


def add_dead_model(root: Path) -> None:
    """A model whose server refuses every connection: its rows are error rows."""
    models_path = root / "configs" / "models.yaml"
    models = yaml.safe_load(models_path.read_text(encoding="utf-8"))
    models["models"]["dead"] = {
        "provider": "openai_compatible",
        "model": "openai/dead",
        "api_base": "http://127.0.0.1:9/v1",
    }
    models_path.write_text(yaml.safe_dump(models, sort_keys=False), encoding="utf-8")


def test_stages_on_an_existing_store_never_import_mlflow(tmp_path: Path) -> None:
    root = make_suite(tmp_path / "suite")
    add_dead_model(root)
    assert "mlflow" in imported_modules(root, "validate", "--json", "validation.json")
    assert (root / "mlruns" / "mlflow.db").is_file()
    benchmarks = ("--benchmark", "sample_tools", "--benchmark", "sample_multiturn")
    models = ("--model", "mock-flaky", "--model", "dead")
    commands = [
        ("run", *models, *benchmarks, "--output", "t.jsonl", "--fail-on-error", "1"),
        ("score", "--results", "t.jsonl"),
        ("score", "--results", "t.jsonl"),  # again: the verdicts are already there
    ]
    for command in commands:
        loaded = imported_modules(root, *command)
        assert "llm_eval" in loaded  # the check can see our own modules
        assert not loaded & {"mlflow", "sqlalchemy", "pandas"}, (command, loaded)

    rows = read_rows(root / "t.jsonl")
    assert {row.status for row in rows if row.model == "dead"} == {"error"}
    assert any(row.status == "correct" for row in rows)
    record = read_record(root)
    record.assert_whole(rows, scored=True)
    stages = {run.data.tags.get("llm_eval.stage") for run in record.runs}
    assert {"validate", "run", "score", "pipeline"} <= stages
    (run,) = [
        r
        for r in record.runs
        if r.data.tags.get("llm_eval.stage") == "run"
        and r.data.tags.get("llm_eval.model") == "mock-flaky"
    ]
    assert run.info.status == "FINISHED"
    assert run.data.params, "the run's params"
    assert "overall/accuracy" in run.data.metrics or "strict_accuracy" in run.data.metrics
    assert run.data.tags["mlflow.parentRunId"] in {r.info.run_id for r in record.runs}


def test_the_switch_writes_through_mlflow_instead(tmp_path: Path) -> None:
    root = make_suite(tmp_path / "suite")
    imported_modules(root, "validate", "--json", "validation.json")
    loaded = imported_modules(
        root, "run", "--model", "mock-varied", "--benchmark", "sample_logic",
        "--output", "t.jsonl", LLM_EVAL_MLFLOW_SQLITE="0",
    )  # fmt: skip
    assert "mlflow" in loaded
    read_record(root).assert_whole(read_rows(root / "t.jsonl"), scored=False)
