"""The tool registry: schemas for enabled tools, errors returned to the model, new tools."""

from __future__ import annotations

from typing import Any

from llm_eval.schemas import ToolConfig
from llm_eval.tools.registry import (
    _TOOLS,
    ToolOutcome,
    ToolRegistry,
    register_tool,
    registered_tool_names,
)

ECHO_SCHEMA: dict[str, Any] = {"type": "function", "function": {"name": "echo"}}
OFFERED = ["python_exec"]


async def test_disabled_or_unknown_tools_are_not_offered_and_fail_as_results() -> None:
    registry = ToolRegistry({"python_exec": ToolConfig(enabled=False)})
    assert registry.schemas(["python_exec", "nope"]) == []
    record = await registry.execute("c1", "python_exec", '{"code": "print(1)"}', offered=OFFERED)
    assert record.error == "unknown or disabled tool 'python_exec'"
    assert record.result == f"error: {record.error}"


async def test_bad_arguments_become_an_error_the_model_can_read() -> None:
    registry = ToolRegistry({"python_exec": ToolConfig()})
    not_json = await registry.execute("c1", "python_exec", "{code: 1", offered=OFFERED)
    assert not_json.error and not_json.error.startswith("arguments are not valid JSON")
    not_object = await registry.execute("c2", "python_exec", "[1, 2]", offered=OFFERED)
    assert not_object.error == "arguments must be a JSON object"
    empty = await registry.execute("c3", "python_exec", '{"code": "  "}', offered=OFFERED)
    assert empty.result == "error: `code` must be a non-empty string"


async def test_a_new_tool_is_one_registered_function() -> None:
    @register_tool("echo", ECHO_SCHEMA)
    async def echo(arguments: dict[str, Any], settings: ToolConfig) -> ToolOutcome:
        return ToolOutcome(str(arguments.get("text")), ("none",))

    try:
        assert "echo" in registered_tool_names()
        registry = ToolRegistry({"echo": ToolConfig()})
        assert registry.schemas(["echo"]) == [ECHO_SCHEMA]
        record = await registry.execute("c1", "echo", '{"text": "hi"}', offered=["echo"])
        assert record.result == "hi" and record.isolation == ["none"] and record.error is None
        assert record.duration_s is not None
    finally:
        del _TOOLS["echo"]


async def test_an_enabled_tool_not_offered_is_refused_without_running() -> None:
    registry = ToolRegistry({"python_exec": ToolConfig()})
    record = await registry.execute("c1", "python_exec", '{"code": "print(1)"}', offered=[])
    assert record.refused and record.duration_s is None and record.isolation == []
    assert record.error == "tool 'python_exec' is not offered in this task (offered: none)"
    assert record.result == f"error: {record.error}"
    offered = await registry.execute("c2", "python_exec", '{"code": "print(1)"}', offered=OFFERED)
    assert not offered.refused and offered.result == "1"
