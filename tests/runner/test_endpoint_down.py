"""A model whose endpoint refuses connections beside a model that answers, in one run: the
refusing model's tasks end quickly as `endpoint_down` error rows, the other model finishes, and
`--resume` runs the ended tasks once the endpoint is up."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from llm_eval.config.loading import load_config
from llm_eval.runner.runner import EvaluationRunner
from llm_eval.runner.trace_io import read_rows
from tests.runner.test_provider_faults import SECRET, add_stub_model, route
from tests.support.openai_stub import StubServer

__all__ = ["route"]  # the fixture, used by name below

pytestmark = pytest.mark.slow  # a real stub server

REFUSALS = 3
PER_MODEL = 2


def _runner(root: Path, output: Path, *, resume: bool = False) -> EvaluationRunner:
    config = load_config(root)
    settings = {"backoff_base_s": 0.0, "backoff_max_s": 0.0, "max_attempts": 10,
                "per_model_limit": PER_MODEL, "endpoint_down_after": REFUSALS}  # fmt: skip
    config.runner = config.runner.model_copy(update=settings)
    models = ["mock-varied", "stub"]
    return EvaluationRunner(
        config, models, ["sample_math", "sample_logic"], output, use_cache=False, resume=resume
    )


def test_a_refusing_endpoint_ends_its_models_tasks_and_spares_the_others(
    config_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, route: str
) -> None:
    monkeypatch.setenv("STUB_API_KEY", SECRET)
    monkeypatch.setenv("LLM_EVAL_TRACKING", "0")
    stub = StubServer()  # its port is bound but not listening yet: connections are refused
    add_stub_model(config_copy, stub, route)
    out = tmp_path / "t.jsonl"
    summary = asyncio.run(_runner(config_copy, out).run())
    rows = read_rows(out)
    mock = [row for row in rows if row.model == "mock-varied"]
    down = [row for row in rows if row.model == "stub"]
    assert len(mock) == len(down) == 14
    assert all(row.status != "error" for row in mock)
    assert all(row.status == "error" and row.score is None for row in down)
    assert {row.error.kind for row in down if row.error} == {"endpoint_down"}
    # Refusals in a row until the breaker opens, plus the attempts already under way then;
    # without it every task would make all ten of its attempts (140).
    assert sum(row.attempts for row in down) <= REFUSALS + PER_MODEL
    assert summary.first_errors["stub"].kind == "endpoint_down"
    assert "--resume" in summary.first_errors["stub"].message

    with stub:  # the endpoint is up again: a resume runs the ended tasks, and only those
        asyncio.run(_runner(config_copy, out, resume=True).run())
        assert stub.total_requests == 14
    rows = read_rows(out)
    assert len(rows) == 28 and all(row.status != "error" for row in rows)
