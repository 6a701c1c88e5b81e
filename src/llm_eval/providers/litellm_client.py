"""Real providers through `litellm.acompletion`: an explicit timeout, no hidden retries."""

from __future__ import annotations

import os
import time
from typing import Any, ClassVar

from llm_eval.errors import ProviderError
from llm_eval.providers import chat_completions as protocol
from llm_eval.providers.base import ChatRequest, ChatResponse, Provider
from llm_eval.providers.body_limits import bound_litellm_transports, too_large_message
from llm_eval.providers.failures import is_client_config_error
from llm_eval.providers.reasoning import reasoning_params
from llm_eval.providers.registry import register_provider
from llm_eval.providers.reply_errors import reply_failure
from llm_eval.providers.usage_counts import cost as known_cost
from llm_eval.redaction import redact
from llm_eval.schemas import ModelConfig

_litellm: Any = None


def load_litellm() -> Any:
    """Import LiteLLM once, offline-safe: the price map comes from the package, not the web."""
    global _litellm
    if _litellm is None:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        os.environ.setdefault("LITELLM_LOG", "ERROR")
        import litellm

        litellm.telemetry = False
        litellm.suppress_debug_info = True
        litellm.drop_params = True  # a setting a provider does not know is dropped, not fatal
        # Retries belong to our runner; LiteLLM's own would hide attempts and double them.
        litellm.num_retries = 0
        bound_litellm_transports()  # before any client exists: every reply's body is capped
        _litellm = litellm
    return _litellm


@register_provider("litellm")
class LiteLLMProvider(Provider):
    """Any model LiteLLM can reach, including local OpenAI-compatible servers via `api_base`."""

    #: LiteLLM sends an entry's settings as the direct route does and hands back its reply in
    #: the chat-completions shape, whatever the provider behind it.
    wire_protocol: ClassVar[str | None] = protocol.PROTOCOL

    @classmethod
    def config_problems(cls, model: ModelConfig) -> list[tuple[str | None, str]]:
        if not model.api_key_env and not model.api_base:
            return [(None, "a litellm model needs api_key_env or a local api_base")]
        return []

    def __init__(self, model: ModelConfig) -> None:
        super().__init__(model)
        self.litellm = load_litellm()
        self._key = os.environ.get(model.api_key_env, "") if model.api_key_env else ""

    def _kwargs(self, request: ChatRequest) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": self.model.model,
            "messages": request.messages,
            "max_tokens": request.max_tokens,
            "timeout": request.timeout_s,
            "num_retries": 0,
            "max_retries": 0,
            **reasoning_params(self.model),
            **self.model.extra_params,
        }
        extra_body = _extra_body(self.model)
        if extra_body:
            kwargs["extra_body"] = extra_body
        if request.tools:
            kwargs["tools"] = request.tools
        if self.model.temperature is not None:
            kwargs["temperature"] = self.model.temperature
        if self.model.api_base:
            kwargs["api_base"] = self.model.api_base
        # Local servers take any key; LiteLLM's OpenAI route insists on one being present.
        kwargs["api_key"] = self._key or "no-key-needed"
        return kwargs

    async def complete(self, request: ChatRequest) -> ChatResponse:
        started = time.perf_counter()
        try:
            raw = await self.litellm.acompletion(**self._kwargs(request))
        except ProviderError:
            raise
        except Exception as exc:  # LiteLLM raises many types; classify them in one place
            raise classify_exception(exc, self._key) from None
        latency = time.perf_counter() - started
        return self._parse(raw, latency)

    def _parse(self, raw: Any, latency: float) -> ChatResponse:
        """LiteLLM's reply is normalised to the chat-completions shape: read by the protocol's
        own reader, as the direct route reads its JSON. A cost the entry does not configure
        comes from LiteLLM's price table."""
        choices = getattr(raw, "choices", None) or []
        if choices:
            failure = reply_failure(_decoded_view(raw, choices[0]))
            if failure is not None:
                raise failure
        response = protocol.reply_from_data(raw.model_dump(warnings=False), self.model, latency)
        usage = response.usage
        if usage.cost_usd is None and getattr(raw, "usage", None) is not None:
            usage.cost_usd = self._table_cost(raw)
            usage.cost_source = "price table" if usage.cost_usd is not None else None
        return response

    def _table_cost(self, raw: Any) -> float | None:
        # LiteLLM already priced the response from its table while building it; pricing it
        # again would double the client's CPU cost per call. Unknown models carry None.
        hidden = getattr(raw, "_hidden_params", None) or {}
        cost = hidden.get("response_cost") if isinstance(hidden, dict) else None
        return known_cost(cost) if cost else None


def _extra_body(model: ModelConfig) -> dict[str, Any]:
    """The thinking switch's body fields and the entry's own `extra_body`, merged as the direct
    route merges them (a plain `**` would let one replace the other)."""
    merged: dict[str, Any] = {}
    for params in (reasoning_params(model), model.extra_params):
        extra = params.get("extra_body")
        if isinstance(extra, dict):
            merged.update(extra)
    return merged


def _decoded_view(raw: Any, choice: Any) -> dict[str, Any]:
    """What `reply_failure` reads, rebuilt from LiteLLM's reply: LiteLLM maps an unknown
    finish reason to "stop" and moves the choice's `error` into `provider_specific_fields`."""
    extra = getattr(choice, "provider_specific_fields", None) or {}
    extra = extra if isinstance(extra, dict) else {}
    message = getattr(choice, "message", None)
    view_choice = {
        "finish_reason": extra.get("native_finish_reason") or choice.finish_reason,
        "error": extra.get("error") or getattr(choice, "error", None),
        "message": {"content": getattr(message, "content", None)},
    }
    return {"error": getattr(raw, "error", None), "choices": [view_choice]}


def classify_exception(exc: Exception, api_key: str = "") -> ProviderError:
    """A LiteLLM / HTTP exception, translated to what the server said (a status, a message,
    headers) and judged by the protocol's rules, as the direct route's failures are."""
    name = type(exc).__name__
    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) else None
    too_large = too_large_message(exc)
    if too_large is not None:
        return protocol.transport_error("response_too_large", redact(too_large)[:1000])
    message = redact(str(exc), [api_key] if api_key else None)[:1000]
    header = lambda name: _header(exc, name)  # noqa: E731
    if is_client_config_error(exc):
        # Raised before any byte was sent (LiteLLM wraps it as a 500): no retry can help.
        return protocol.transport_error("config_error", message)
    if "ContextWindowExceeded" in name or "context_length_exceeded" in message:
        return protocol.status_error(400, message, header, {"code": "context_length_exceeded"})
    if "Timeout" in name:
        return protocol.transport_error("timeout", message, status)
    if name == "APIConnectionError" or "Connection error" in message:
        return protocol.transport_error("connection", message, status)
    if "JSONDecodeError" in name or "Expecting value" in message or "Invalid JSON" in message:
        return protocol.transport_error("malformed_response", message, status)
    if status == 429 or "RateLimit" in name:
        return protocol.status_error(429, message, header)
    if status is not None:
        return protocol.status_error(status, message, header)
    return ProviderError(name, message, transient=False)


def _header(exc: Exception, name: str) -> str | None:
    for attribute in ("response", "litellm_response_headers"):
        holder = getattr(exc, attribute, None)
        headers = getattr(holder, "headers", holder)
        try:
            value = headers.get(name) if headers is not None else None
        except AttributeError:
            value = None
        if value:
            return str(value)
    return None
