"""The mock provider calls the tool its task offers, so a benchmark of a new tool runs
offline with the mock as it would with a real model."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from llm_eval.config.loading import load_config
from llm_eval.runner.runner import EvaluationRunner
from llm_eval.runner.trace_io import read_rows
from llm_eval.schemas import ToolConfig
from llm_eval.tools.registry import _TOOLS, ToolOutcome, register_tool

CHAR_COUNT: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "char_count",
        "description": "Count the characters of a text.",
        "parameters": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
    },
}


@pytest.fixture()
def char_count() -> Iterator[list[dict[str, Any]]]:
    """A new registered tool; yields the arguments of every call it ran."""
    ran: list[dict[str, Any]] = []

    @register_tool("char_count", CHAR_COUNT)
    async def count(arguments: dict[str, Any], settings: ToolConfig) -> ToolOutcome:
        ran.append(arguments)
        return ToolOutcome(str(len(str(arguments.get("text", "")))))

    try:
        yield ran
    finally:
        del _TOOLS["char_count"]


def test_a_benchmark_of_a_new_tool_passes_offline_with_the_mock(
    config_copy: Path, char_count: list[dict[str, Any]], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.setenv("LLM_EVAL_TRACKING", "0")
    tasks = config_copy / "data" / "sample_tools.jsonl"
    lines = [json.loads(line) for line in tasks.read_text(encoding="utf-8").splitlines()]
    for task in lines:
        task["expected_tools"] = ["char_count"]
    tasks.write_text("".join(json.dumps(t) + "\n" for t in lines), encoding="utf-8")
    config = load_config(config_copy)
    config.tools["char_count"] = ToolConfig()
    bench = config.benchmarks["sample_tools"]
    config.benchmarks["sample_tools"] = bench.model_copy(update={"tools": ["char_count"]})
    out = tmp_path / "t.jsonl"
    runner = EvaluationRunner(config, ["mock-varied"], ["sample_tools"], out, use_cache=False)
    asyncio.run(runner.run())
    rows = read_rows(out)
    assert len(rows) == 2 and len(char_count) == 2
    for row in rows:
        [call] = row.tool_calls
        assert (call.name, call.refused, call.error) == ("char_count", False, None)
        assert row.status == "correct", row.response
