"""A secret echoed by a model reaches no written byte: traces, scores, reports, MLflow, cache,
console. The secret is not key-shaped; only its environment variable's name says it is secret.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO

pytestmark = pytest.mark.slow

SECRET = "correct-horse-battery-staple-42"


def test_an_echoed_secret_reaches_no_written_byte(config_copy: Path, tmp_path: Path) -> None:
    params_path = config_copy / "params.yaml"
    params = yaml.safe_load(params_path.read_text(encoding="utf-8"))
    replies = [f"My key is {SECRET}.\nFinal answer: 42", f"<think>{SECRET}</think>Final answer: 1"]
    params["models"]["leaky"] = {
        "provider": "scripted", "model": "scripted/leaky", "extra_params": {"outputs": replies},
    }  # fmt: skip
    params_path.write_text(yaml.safe_dump(params, allow_unicode=True), encoding="utf-8")
    cache = tmp_path / "cache"
    env = {**os.environ, "LLM_EVAL_TRACKING": "1", "DVC_ROOT": str(config_copy),
           "LEAKY_SERVICE_TOKEN": SECRET, "LLM_EVAL_CACHE_DIR": str(cache)}  # fmt: skip
    env.pop("MLFLOW_TRACKING_URI", None)
    trace, scored = config_copy / "results" / "t.jsonl", config_copy / "results" / "s.jsonl"
    commands = [
        ["run", "--model", "leaky", "--benchmark", "sample_math", "--limit", "3",
         "--output", str(trace)],
        ["score", "--results", str(trace), "--output", str(scored),
         "--metrics", str(config_copy / "results" / "m.json")],
        ["report", "--results", str(scored), "--output", str(config_copy / "reports" / "r.md"),
         "--charts-dir", str(config_copy / "docs" / "images")],
    ]  # fmt: skip
    console = ""
    for args in commands:
        result = subprocess.run(
            [sys.executable, "-m", "llm_eval.cli", *args, "--config-root", str(config_copy)],
            cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr[-2000:]
        console += result.stdout + result.stderr
    assert SECRET not in console
    written = [p for p in [*config_copy.rglob("*"), *cache.rglob("*")] if p.is_file()]
    written = [p for p in written if p != params_path]
    assert any(p.name == "mlflow.db" for p in written), "tracking wrote nothing"
    assert any(p.suffix == ".svg" for p in written) and trace in written
    assert "My key is [REDACTED]" in trace.read_text(encoding="utf-8")  # the reply was stored
    leaks = [str(p) for p in written if SECRET.encode() in p.read_bytes()]
    assert leaks == []
