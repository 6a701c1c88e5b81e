"""The provider seam: one request type, one response type, one async method."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from llm_eval.schemas import ModelConfig, Usage


@dataclass(frozen=True)
class ToolCall:
    """A tool call requested by the model; `arguments` is raw JSON text as sent."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class TaskHint:
    """What the task is, for simulated providers only; never sent to a real provider."""

    benchmark: str
    task_id: str
    answer: str
    task_type: str


@dataclass(frozen=True)
class ChatRequest:
    """One model call."""

    model_name: str
    model: ModelConfig
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None
    max_tokens: int
    timeout_s: float
    epoch: int = 0
    hint: TaskHint | None = None

    def cache_payload(self) -> dict[str, Any]:
        """Everything that determines the answer: the response-cache key is its hash."""
        settings = self.model.model_dump(
            exclude={"label", "api_key_env", "input_cost_per_mtok", "output_cost_per_mtok"}
        )
        return {
            "model": self.model_name,
            "settings": settings,
            "max_tokens": self.max_tokens,
            "messages": self.messages,
            "tools": self.tools,
            "epoch": self.epoch,
        }


@dataclass
class ChatResponse:
    """What came back from one call."""

    content: str | None
    reasoning: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None
    latency_s: float = 0.0

    def assistant_message(self) -> dict[str, Any]:
        """The OpenAI-format assistant message to append to the conversation."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content or ""}
        if self.tool_calls:
            message["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                }
                for call in self.tool_calls
            ]
        return message


class Provider(Protocol):
    """A model backend. Retries, caching and concurrency live outside, in the runner."""

    #: Whether identical requests may be replayed from the response cache.
    cacheable: bool

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """Make one call; raise `ProviderError` on failure."""
        ...
