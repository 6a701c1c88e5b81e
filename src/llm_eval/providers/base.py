"""The provider seam: one request type, one response type, one async method."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, ClassVar

from llm_eval.redaction import register_secret, secret_settings
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
    difficulty: str | None = None
    distractors: tuple[str, ...] = ()
    strict_form: bool = False
    """The task demands a script or format: only the answer as written is a right reply."""


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

    def cache_payload(self, wire: str) -> dict[str, Any]:
        """Everything that determines the answer: the response-cache key is its hash.

        `wire` is the protocol the provider speaks (`Provider.wire_protocol`), not its name:
        two providers that send the same request for an entry share its cached replies.
        """
        return {
            "model": self.model_name,
            "settings": {**self.model.answer_settings(), "provider": wire},
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


class Provider:
    """A model backend: one async `complete`; policy in small overridable methods.

    Retries, caching and concurrency live outside, in the runner's `ModelClient`. A subclass
    sets `cacheable` / `simulated` and overrides what differs from these defaults.
    """

    #: Whether identical requests may be replayed from the response cache.
    cacheable: bool = True
    #: Simulated providers get the task's expected answer (`ChatRequest.hint`); real ones never.
    simulated: ClassVar[bool] = False
    #: The wire protocol the provider speaks (e.g. `chat_completions.PROTOCOL`). Providers
    #: speaking one protocol send the same request for the same model entry, so a reply
    #: cached or a row written by one serves the other. None: a protocol of its own.
    wire_protocol: ClassVar[str | None] = None

    def __init__(self, model: ModelConfig) -> None:
        self.model = model
        # A server may echo what it was sent (its key, any header) in any field of a reply or
        # of an error: those values are redacted wherever text is written, however they look.
        for value in secret_settings(model.extra_params):
            register_secret(value)
        if model.api_key_env:
            register_secret(os.environ.get(model.api_key_env, ""))

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """Make one call; raise `ProviderError` on failure."""
        raise NotImplementedError

    async def aclose(self) -> None:
        """Release what the provider holds open (connections) once a run is over."""
        return None

    def connection_key(self) -> str:
        """Models sharing this key share one adaptive concurrency limit (one rate limit)."""
        return f"{self.model.provider}|{self.model.api_base or self.model.model.split('/')[0]}"

    def max_connections(self) -> int | None:
        """Most calls in flight this backend takes at once; None leaves it to the runner."""
        return self.model.max_concurrency

    @classmethod
    def config_problems(cls, model: ModelConfig) -> list[tuple[str | None, str]]:
        """What is wrong with a model entry for this provider: (offending key, message)."""
        return []
