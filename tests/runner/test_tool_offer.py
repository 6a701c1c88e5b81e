"""A model may call only the tools its benchmark offers: the real runner against the stub."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from llm_eval.config.loading import load_config
from llm_eval.runner.runner import EvaluationRunner
from llm_eval.runner.trace_io import read_rows
from llm_eval.schemas import ToolConfig
from llm_eval.tools.registry import _TOOLS, ToolOutcome, register_tool
from tests.runner.test_provider_faults import SECRET, add_stub_model
from tests.support.openai_stub import StubServer, start_stub

ECHO_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "echo",
        "description": "Return the text it is given.",
        "parameters": {"type": "object", "properties": {"code": {"type": "string"}}},
    },
}


@pytest.fixture()
def echo_tool() -> Iterator[list[dict[str, Any]]]:
    """A second registered tool, `echo`; yields the arguments of every call it ran."""
    ran: list[dict[str, Any]] = []

    @register_tool("echo", ECHO_SCHEMA)
    async def echo(arguments: dict[str, Any], settings: ToolConfig) -> ToolOutcome:
        ran.append(arguments)
        return ToolOutcome(str(arguments.get("code")))

    try:
        yield ran
    finally:
        del _TOOLS["echo"]


@pytest.fixture()
def stub(config_copy: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[StubServer]:
    monkeypatch.setenv("STUB_API_KEY", SECRET)
    monkeypatch.setenv("LLM_EVAL_TRACKING", "0")
    with start_stub() as server:
        add_stub_model(config_copy, server)
        yield server


def _run_sample_tools(root: Path, output: Path, offered: list[str]) -> None:
    """Run `sample_tools` on the stub with both tools enabled and only `offered` offered."""
    config = load_config(root)
    config.tools["echo"] = ToolConfig()
    bench = config.benchmarks["sample_tools"]
    config.benchmarks["sample_tools"] = bench.model_copy(update={"tools": offered})
    config.runner = config.runner.model_copy(
        update={"backoff_base_s": 0.0, "backoff_max_s": 0.0, "cache": False}
    )
    runner = EvaluationRunner(config, ["stub"], ["sample_tools"], output, use_cache=False)
    asyncio.run(runner.run())


def test_an_enabled_tool_the_benchmark_does_not_offer_is_refused_and_recorded(
    config_copy: Path, stub: StubServer, echo_tool: list[dict[str, Any]], tmp_path: Path
) -> None:
    stub.set_config(call_tool="python_exec")  # the model calls python_exec, which is enabled
    out = tmp_path / "t.jsonl"
    _run_sample_tools(config_copy, out, ["echo"])
    rows = read_rows(out)
    assert len(rows) == 2 and {row.status for row in rows} != {"error"}
    for row in rows:
        [record] = row.tool_calls
        assert record.name == "python_exec" and record.refused
        assert record.error == "tool 'python_exec' is not offered in this task (offered: echo)"
        assert record.isolation == [] and record.duration_s is None  # it never ran
    # The model got the refusal back as the tool result and carried on to a final answer.
    tool_replies = [m for body in stub.requests for m in body["messages"] if m["role"] == "tool"]
    assert len(tool_replies) == 2
    assert all(m["content"].startswith("error: tool 'python_exec' is not") for m in tool_replies)
    assert echo_tool == []


def test_the_offered_tool_still_runs(
    config_copy: Path, stub: StubServer, echo_tool: list[dict[str, Any]], tmp_path: Path
) -> None:
    out = tmp_path / "t.jsonl"
    _run_sample_tools(config_copy, out, ["echo"])
    records = [record for row in read_rows(out) for record in row.tool_calls]
    assert [r.name for r in records] == ["echo", "echo"]
    assert not any(r.refused or r.error for r in records)
    assert len(echo_tool) == 2
