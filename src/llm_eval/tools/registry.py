"""`ToolRegistry`: OpenAI-compatible tool schemas and their execution.

A new tool is one module in this folder with one async function
`(arguments, settings) -> ToolOutcome` registered with `@register_tool(name, schema)`, plus
its entry in `configs/tools.yaml`. A tool with settings of its own registers their model
(a `ToolConfig` subclass, `settings=`): its entry is checked against it and the function
receives it, so each tool owns its settings (`python_exec` its sandbox limits).
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from pydantic import ConfigDict

from llm_eval.redaction import redact
from llm_eval.registry import Registry
from llm_eval.schemas import ToolCallRecord, ToolConfig

ToolRunner = Callable[[dict[str, Any], ToolConfig], Awaitable["ToolOutcome"]]


@dataclass(frozen=True)
class ToolOutcome:
    """What a tool returns to the model, plus what the trace should record about it."""

    content: str
    isolation: tuple[str, ...] = ()
    budget_wait_s: float | None = None  # a sandboxed tool's wait for its memory budget


class NoSettings(ToolConfig):
    """The settings of a tool that has none of its own: `enabled` only, any other key a typo."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class RegisteredTool(NamedTuple):
    """A tool's schema for the model, its function and the model of its settings."""

    schema: dict[str, Any]
    run: ToolRunner
    settings: type[ToolConfig]


# Tools in the modules of this folder (python_exec among them) register when the registry is
# first read.
_TOOLS: Registry[RegisteredTool] = Registry("tool", "llm_eval.tools")


def register_tool(
    name: str, schema: dict[str, Any], *, settings: type[ToolConfig] = NoSettings
) -> Callable[[ToolRunner], ToolRunner]:
    """Decorator: make `name` a tool benchmarks may offer, described to the model by `schema`,
    configured by an entry of the model `settings` in `configs/tools.yaml`."""

    def register(runner: ToolRunner) -> ToolRunner:
        _TOOLS.register(name, defined_by=runner)(RegisteredTool(schema, runner, settings))
        return runner

    return register


def tool_settings(name: str, entry: ToolConfig) -> ToolConfig:
    """The entry of tool `name` read by the tool's own settings model; a pydantic
    `ValidationError` names a key it does not know or a value out of range."""
    return _TOOLS.lookup(name).settings.model_validate(entry.model_dump())


def registered_tool_names() -> list[str]:
    """Every tool this package can run, enabled or not."""
    return _TOOLS.names()


class ToolRegistry:
    """The enabled tools of one run: their schemas for the model and their execution."""

    def __init__(self, settings: Mapping[str, ToolConfig]) -> None:
        self._settings = {
            name: tool_settings(name, cfg)
            for name, cfg in settings.items()
            if cfg.enabled and name in _TOOLS
        }

    def schemas(self, names: list[str]) -> list[dict[str, Any]]:
        """OpenAI tool schemas of `names`, in order, skipping tools that are not enabled."""
        return [_TOOLS[name].schema for name in names if self.is_available(name)]

    def is_available(self, name: str) -> bool:
        """Registered in code and enabled in `configs/tools.yaml`."""
        return name in _TOOLS and name in self._settings

    async def execute(
        self, call_id: str, name: str, arguments: str, *, offered: Sequence[str]
    ) -> ToolCallRecord:
        """Run one tool call; a bad name or bad JSON arguments becomes an error result.

        `offered` are the tools the task's benchmark gives the model: a call to any other
        tool, even an enabled one, is refused here, where tools run, whatever the model was
        shown. What a tool prints is redacted here, where it enters the conversation, so
        neither the model, nor the trace, nor the cache ever holds a secret a tool could reach.
        """
        record = ToolCallRecord(id=call_id, name=name, arguments=redact(arguments))
        if name not in offered:
            return _refused(record, offered)
        if not self.is_available(name):
            return _failed(record, f"unknown or disabled tool {name!r}")
        try:
            parsed = json.loads(arguments or "{}")
        except json.JSONDecodeError as exc:
            return _failed(record, f"arguments are not valid JSON: {exc.msg}")
        if not isinstance(parsed, dict):
            return _failed(record, "arguments must be a JSON object")
        started = time.perf_counter()
        outcome = await _TOOLS[name].run(parsed, self._settings[name])
        return record.model_copy(
            update={
                "result": redact(outcome.content),
                "duration_s": round(time.perf_counter() - started, 4),
                "isolation": list(outcome.isolation),
                "budget_wait_s": outcome.budget_wait_s,
            }
        )


def _refused(record: ToolCallRecord, offered: Sequence[str]) -> ToolCallRecord:
    """A call to a tool the benchmark does not offer: not run, marked in the trace."""
    choices = ", ".join(sorted(offered)) or "none"
    message = f"tool {record.name!r} is not offered in this task (offered: {choices})"
    return _failed(record, message).model_copy(update={"refused": True})


def _failed(record: ToolCallRecord, message: str) -> ToolCallRecord:
    # The model sees the error as the tool result, so it can correct itself.
    message = redact(message)
    return record.model_copy(update={"error": message, "result": f"error: {message}"})
