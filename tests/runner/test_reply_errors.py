"""HTTP 200 replies that carry an error, and replies with unsafe text, on both real routes
against the local stub: error rows with the provider's words, never a scored wrong answer."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from llm_eval.runner.runner import TaskFilter
from llm_eval.runner.trace_io import read_rows
from tests.runner.test_provider_faults import SECRET, _runner, route, stub_root
from tests.support.openai_stub import StubServer

__all__ = ["route", "stub_root"]  # fixtures used by name below

pytestmark = pytest.mark.slow  # real stub servers


def _run(root: Path, out: Path, tasks: int, **runner: object) -> None:
    evaluation = _runner(root, out, ["sample_math"], **runner)
    evaluation.filter = TaskFilter(limit=tasks)
    asyncio.run(evaluation.run())


def test_an_error_in_a_200_reply_is_an_error_row_with_the_providers_words(
    stub_root: tuple[Path, StubServer], tmp_path: Path
) -> None:
    root, stub = stub_root
    stub.set_config(fault_rate=1.0, fault_kinds=("error_200",), faults_per_request=99,
                    echo_api_key=True)  # fmt: skip
    out = tmp_path / "t.jsonl"
    _run(root, out, 2, max_attempts=3)
    rows = read_rows(out)
    assert [row.status for row in rows] == ["error", "error"]
    for row in rows:
        assert row.error is not None and row.score is None
        assert row.error.kind == "rate_limit" and row.error.status_code == 429
        assert "Provider rate limited upstream" in row.error.message
        assert row.attempts == 3  # a rate limit is worth another try
    assert stub.total_requests == 6


def test_a_rate_limit_in_a_200_reply_is_retried_then_scored(
    stub_root: tuple[Path, StubServer], tmp_path: Path
) -> None:
    root, stub = stub_root
    stub.set_config(fault_rate=1.0, fault_kinds=("error_200",), faults_per_request=1)
    out = tmp_path / "t.jsonl"
    _run(root, out, 2, max_attempts=3)
    rows = read_rows(out)
    assert all(row.status != "error" and row.attempts == 2 for row in rows)


def test_an_error_after_partial_content_keeps_the_text_unscored(
    stub_root: tuple[Path, StubServer], tmp_path: Path
) -> None:
    root, stub = stub_root
    stub.set_config(fault_rate=1.0, fault_kinds=("error_finish",), faults_per_request=99)
    out = tmp_path / "t.jsonl"
    _run(root, out, 1, max_attempts=2)
    (row,) = read_rows(out)
    assert row.status == "error" and row.score is None and row.error is not None
    assert row.error.kind == "http_502" and row.attempts == 2
    assert "disconnected mid-stream" in row.error.message
    assert row.error.partial_content == "The answer is partial"


def test_a_lone_surrogate_in_finish_reason_still_writes_the_row(
    stub_root: tuple[Path, StubServer], tmp_path: Path
) -> None:
    root, stub = stub_root
    stub.set_config(fault_rate=1.0, fault_kinds=("surrogate_finish",), faults_per_request=99)
    out = tmp_path / "t.jsonl"
    _run(root, out, 2, cache=True)  # the cache stores the reply too
    rows = read_rows(out)
    assert len(rows) == 2 and all(row.status != "error" for row in rows)
    # LiteLLM maps a finish reason it does not know to "stop"; the direct route keeps it.
    assert {row.calls[-1].finish_reason for row in rows} <= {"stop\\ud83d", "stop"}
    assert SECRET not in json.dumps([row.model_dump() for row in rows])
