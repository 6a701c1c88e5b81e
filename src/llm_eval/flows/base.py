"""What a flow gets (a way to call the model, tools, the prompt) and what it returns."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from llm_eval.providers.base import ChatResponse
from llm_eval.schemas import PromptConfig, Task, ToolCallRecord
from llm_eval.tools.registry import ToolRegistry

Messages = list[dict[str, Any]]
CallModel = Callable[[Messages, list[dict[str, Any]] | None], Awaitable[ChatResponse]]


@dataclass
class FlowContext:
    """Everything a flow needs; the runner owns retries, caching and limits behind `call`."""

    call: CallModel
    prompt: PromptConfig
    tools: ToolRegistry
    tool_names: list[str]
    max_tool_rounds: int


@dataclass
class FlowResult:
    """The conversation a flow produced and the final text that gets scored."""

    messages: Messages
    response: str | None
    reasoning: str | None = None
    tool_calls: list[ToolCallRecord] = field(default_factory=list)


class Flow(Protocol):
    """Builds messages for one task, calls the model as often as it needs, returns the result."""

    async def __call__(self, task: Task, ctx: FlowContext) -> FlowResult: ...


def opening_messages(prompt: PromptConfig, user_text: str) -> Messages:
    """System prompt (if any) and the first user turn."""
    messages: Messages = []
    if prompt.system:
        messages.append({"role": "system", "content": prompt.system})
    messages.append({"role": "user", "content": prompt.user_template.format(question=user_text)})
    return messages


def with_system(prompt: PromptConfig, turns: Messages) -> Messages:
    """Prepend the system prompt to a conversation that does not already carry one."""
    if prompt.system and not any(turn.get("role") == "system" for turn in turns):
        return [{"role": "system", "content": prompt.system}, *turns]
    return list(turns)
