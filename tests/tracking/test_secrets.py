"""A secret echoed by a model reaches no written byte: traces, scores, reports, MLflow, cache,
console. The secret is not key-shaped; only its environment variable's name says it is secret.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.support.catalog import add_models

pytestmark = pytest.mark.slow

SECRET = "correct-horse-battery-staple-42"


def test_an_echoed_secret_reaches_no_written_byte(config_copy: Path, tmp_path: Path) -> None:
    replies = [f"My key is {SECRET}.\nFinal answer: 42", f"<think>{SECRET}</think>Final answer: 1"]
    leaky = {
        "provider": "scripted", "model": "scripted/leaky", "extra_params": {"outputs": replies},
    }  # fmt: skip
    params_path = add_models(config_copy, {"leaky": leaky})
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


TASK_KEY = "sk-pasted0123456789abcdefXYZ"
"""A key-shaped string a task author pasted into a question."""


def _mlflow_text(root: Path) -> str:
    """Everything MLflow's client gives back for the store: run params, tags, metrics, traces."""
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{root / 'mlruns' / 'mlflow.db'}")
    parts: list[str] = []
    for experiment in client.search_experiments():
        for run in client.search_runs([experiment.experiment_id], max_results=1000):
            parts += [repr(run.data.params), repr(run.data.tags), repr(run.data.metrics)]
        traces = client.search_traces(locations=[experiment.experiment_id], max_results=1000)
        parts += [trace.to_json() for trace in traces]
    assert any("CHAT_MODEL" in part for part in parts), "no trace was read back"
    return "\n".join(parts)


def test_a_secret_in_a_label_a_price_source_or_a_task_reaches_no_written_byte(
    config_copy: Path, tmp_path: Path
) -> None:
    pasted = {
        "provider": "scripted", "model": "scripted/pasted", "label": f"Pasted {SECRET}",
        "input_cost_per_mtok": 1.0, "output_cost_per_mtok": 2.0,
        "price_source": f"read with token {SECRET}", "extra_params": {"note": SECRET},
    }  # fmt: skip
    params_path = add_models(config_copy, {"pasted": pasted})
    tasks = config_copy / "data" / "sample_math.jsonl"
    lines = tasks.read_text(encoding="utf-8").splitlines()
    lines[0] = lines[0].replace("What is", f"Using key {TASK_KEY} and {SECRET}: what is", 1)
    tasks.write_text("\n".join(lines) + "\n", encoding="utf-8")
    env = {**os.environ, "LLM_EVAL_TRACKING": "1", "DVC_ROOT": str(config_copy),
           "PASTED_SERVICE_TOKEN": SECRET,
           "LLM_EVAL_CACHE_DIR": str(tmp_path / "cache")}  # fmt: skip
    env.pop("MLFLOW_TRACKING_URI", None)
    results, images = config_copy / "results", config_copy / "docs" / "images"
    commands = [
        ["run", "--model", "pasted", "--benchmark", "sample_math", "--limit", "2",
         "--output", str(results / "t.jsonl")],
        ["score", "--results", str(results / "t.jsonl"), "--output", str(results / "s.jsonl"),
         "--metrics", str(results / "m.json")],
        ["report", "--results", str(results / "s.jsonl"), "--output",
         str(config_copy / "reports" / "r.md"), "--charts-dir", str(images),
         "--plots-data", str(results / "plots.json")],
    ]  # fmt: skip
    console = ""
    for args in commands:
        result = subprocess.run(
            [sys.executable, "-m", "llm_eval.cli", *args, "--config-root", str(config_copy)],
            cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr[-2000:]
        console += result.stdout + result.stderr
    report = (config_copy / "reports" / "r.md").read_text(encoding="utf-8")
    assert "Pasted [REDACTED]" in report and "read with token [REDACTED]" in report
    trace = (results / "t.jsonl").read_text(encoding="utf-8")
    assert "Using key [REDACTED] and [REDACTED]: what is" in trace  # the task text, redacted
    written = [p for p in [*config_copy.rglob("*"), *(tmp_path / "cache").rglob("*")]
               if p.is_file() and p not in (params_path, tasks)]  # fmt: skip
    assert any(p.suffix == ".svg" for p in written)
    for secret in (SECRET, TASK_KEY):
        assert secret not in console
        assert [str(p) for p in written if secret.encode() in p.read_bytes()] == []
        assert secret not in _mlflow_text(config_copy)


def test_a_password_in_api_base_is_refused_and_never_retried_or_written(
    config_copy: Path, tmp_path: Path
) -> None:
    import asyncio

    from llm_eval.config.loading import load_config
    from llm_eval.config.validation import validate
    from llm_eval.runner.runner import EvaluationRunner, TaskFilter
    from llm_eval.runner.trace_io import read_rows
    from llm_eval.schemas import ModelConfig
    from tests.support.openai_stub import start_stub

    password = "hunter2-url-password"
    with start_stub() as stub:
        api_base = stub.base_url.replace("http://", f"http://user:{password}@")
        remote = {"provider": "litellm", "model": "openai/stub-model", "api_base": api_base}
        add_models(config_copy, {"remote": remote})
        (problem,) = [p for p in validate(str(config_copy)).problems if "api_base" in str(p)]
        assert "environment variable" in str(problem) and password not in str(problem)
        assert problem.line is not None  # points at the api_base line of models.yaml
        # Past `validate` (a runner built directly), the client's refusal is permanent.
        config = load_config(config_copy)
        config.models["remote"] = ModelConfig(provider="litellm", model="openai/stub-model",
                                              api_base=api_base, label=api_base)  # fmt: skip
        out = tmp_path / "t.jsonl"
        runner = EvaluationRunner(config, ["remote"], ["sample_math"], out, use_cache=False,
                                  task_filter=TaskFilter(limit=2))  # fmt: skip
        asyncio.run(runner.run())
        assert stub.total_requests == 0
    rows = read_rows(out)
    assert [(row.error.kind, row.attempts) for row in rows if row.error] == [
        ("config_error", 1)
    ] * 2
    assert rows[0].settings["api_base"].startswith("http://***@127.0.0.1")
    assert password not in out.read_text(encoding="utf-8")


HEADER_SECRET = "team-header-value-5521"
"""Sent in a header whose name says nothing of secrets (`X-Team`): redacted as a header."""
NAMED_SECRET = "named-header-value-8834"
"""Sent as `X-Api-Key`."""
ECHOED_KEY = "plain-access-value-3390"
"""The API key, in a variable whose name does not look secret; the server echoes its
`Authorization` header into every string of its replies but the content."""
URI_PASSWORD = "uri-password-6617"


def test_headers_an_echoing_server_and_a_store_password_reach_no_written_byte(
    config_copy: Path, tmp_path: Path
) -> None:
    from tests.support.openai_stub import start_stub

    planted = (HEADER_SECRET, NAMED_SECRET, ECHOED_KEY, URI_PASSWORD)
    headers = {"X-Team": HEADER_SECRET, "X-Api-Key": NAMED_SECRET}
    results, cache = config_copy / "results", tmp_path / "cache"
    env = {**os.environ, "LLM_EVAL_TRACKING": "1", "DVC_ROOT": str(config_copy),
           "STUB_ACCESS": ECHOED_KEY, "LLM_EVAL_CACHE_DIR": str(cache),
           "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "0", "MLFLOW_HTTP_REQUEST_TIMEOUT": "5"}  # fmt: skip
    env.pop("MLFLOW_TRACKING_URI", None)
    console = ""

    def cli(*args: str, extra_env: dict[str, str] | None = None) -> int:
        nonlocal console
        result = subprocess.run(
            [sys.executable, "-m", "llm_eval.cli", *args, "--config-root", str(config_copy)],
            cwd=REPO, env={**env, **(extra_env or {})}, capture_output=True, text=True,
            timeout=300,
        )  # fmt: skip
        console += result.stdout + result.stderr
        return result.returncode

    with start_stub(echo_in_reply=True) as stub:
        entry = {"model": "openai/stub-model", "api_base": stub.base_url,
                 "api_key_env": "STUB_ACCESS",
                 "extra_params": {"extra_headers": headers}}  # fmt: skip
        params_path = add_models(config_copy, {
            "direct": {"provider": "openai_compatible", **entry},
            "routed": {"provider": "litellm", **entry},
        })  # fmt: skip
        trace = results / "t.jsonl"
        code = cli("run", "--model", "direct", "--model", "routed", "--benchmark",
                   "sample_math", "--limit", "2", "--output", str(trace))  # fmt: skip
        assert code == 0, console[-3000:]
        seen = stub.received
        # The headers and the key were really sent (as headers), and really echoed back.
        assert {r.headers.get("X-Team") for r in seen} == {HEADER_SECRET}
        assert {r.headers.get("Authorization") for r in seen} == {f"Bearer {ECHOED_KEY}"}
        assert all("extra_headers" not in (r.body or {}) for r in seen)
        assert cli("score", "--results", str(trace), "--output", str(results / "s.jsonl"),
                   "--metrics", str(results / "m.json")) == 0, console[-3000:]  # fmt: skip
        assert cli("report", "--results", str(results / "s.jsonl"), "--output",
                   str(config_copy / "reports" / "r.md"), "--charts-dir",
                   str(config_copy / "docs" / "images")) == 0, console[-3000:]  # fmt: skip
        # A tracking server that answers but is no MLflow, then one that is not there: the
        # warning and the error name the store with its password masked.
        answering = stub.base_url.removesuffix("/v1").replace("://", f"://bob:{URI_PASSWORD}@")
        cli("score", "--results", str(trace), "--output", str(tmp_path / "s2.jsonl"),
            extra_env={"MLFLOW_TRACKING_URI": answering})  # fmt: skip
    for absent in (f"postgresql://alice:{URI_PASSWORD}@127.0.0.1:9/mlflow",
                   f"http://bob:{URI_PASSWORD}@127.0.0.1:9"):  # fmt: skip
        code = cli("run", "--mock", "--limit", "1", "--benchmark", "sample_math",
                   "--output", str(tmp_path / "t2.jsonl"),
                   extra_env={"MLFLOW_TRACKING_URI": absent})  # fmt: skip
        assert code != 0
    assert "postgresql://***@127.0.0.1:9/mlflow is unusable" in console
    from llm_eval.runner.trace_io import read_rows

    for row in read_rows(trace):
        assert row.settings["extra_params"]["extra_headers"] == {
            "X-Team": "[REDACTED]", "X-Api-Key": "[REDACTED]"
        }  # fmt: skip
        # LiteLLM maps an unknown finish reason to "stop"; the direct route keeps it.
        echoed = "stop (Bearer [REDACTED])" if row.model == "direct" else "stop"
        assert [call.finish_reason for call in row.calls] == [echoed]
    written = [p for p in [*config_copy.rglob("*"), *cache.rglob("*")]
               if p.is_file() and p != params_path]  # fmt: skip
    assert any(p.name == "mlflow.db" for p in written), "tracking wrote nothing"
    assert any(p.suffix == ".svg" for p in written)
    mlflow_text = _mlflow_text(config_copy)
    for secret in planted:
        assert secret not in console
        assert [str(p) for p in written if secret.encode() in p.read_bytes()] == []
        assert secret not in mlflow_text
