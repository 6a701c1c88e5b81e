"""Real providers through `litellm.acompletion`: an explicit timeout, no hidden retries."""

from __future__ import annotations

import os
import time
from typing import Any

from llm_eval.errors import ProviderError
from llm_eval.providers.base import ChatRequest, ChatResponse, Provider, ToolCall
from llm_eval.providers.body_limits import bound_litellm_transports, too_large_message
from llm_eval.providers.failures import (
    is_client_config_error,
    is_transient_status,
    retry_after_from_headers,
)
from llm_eval.providers.pricing import configured_cost
from llm_eval.providers.reasoning import reasoning_params
from llm_eval.providers.registry import register_provider
from llm_eval.providers.reply_errors import reply_failure
from llm_eval.redaction import redact
from llm_eval.schemas import ModelConfig, Usage

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
        choices = getattr(raw, "choices", None) or []
        if not choices:
            raise ProviderError(
                "empty_response", "the provider returned no choices", transient=True
            )
        failure = reply_failure(_decoded_view(raw, choices[0]))
        if failure is not None:
            raise failure
        message = choices[0].message
        usage = self._usage(raw)
        calls = [
            ToolCall(call.id or f"call_{i}", call.function.name, call.function.arguments or "")
            for i, call in enumerate(getattr(message, "tool_calls", None) or [])
        ]
        return ChatResponse(
            content=message.content,
            reasoning=getattr(message, "reasoning_content", None),
            tool_calls=calls,
            usage=usage,
            finish_reason=choices[0].finish_reason,
            latency_s=latency,
        )

    def _usage(self, raw: Any) -> Usage:
        usage = getattr(raw, "usage", None)
        if usage is None:
            return Usage()
        details = getattr(usage, "completion_tokens_details", None)
        result = Usage(
            prompt_tokens=getattr(usage, "prompt_tokens", None),
            completion_tokens=getattr(usage, "completion_tokens", None),
            reasoning_tokens=getattr(details, "reasoning_tokens", None) if details else None,
            total_tokens=getattr(usage, "total_tokens", None),
        )
        result.cost_usd = configured_cost(self.model, result)
        if result.cost_usd is not None:
            result.cost_source = "configured"
        else:
            result.cost_usd = self._table_cost(raw)
            result.cost_source = "price table" if result.cost_usd is not None else None
        return result

    def _table_cost(self, raw: Any) -> float | None:
        # LiteLLM already priced the response from its table while building it; pricing it
        # again would double the client's CPU cost per call. Unknown models carry None.
        hidden = getattr(raw, "_hidden_params", None) or {}
        cost = hidden.get("response_cost") if isinstance(hidden, dict) else None
        return float(cost) if cost else None


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
    """A LiteLLM / HTTP exception as a `ProviderError` that the retry policy understands."""
    name = type(exc).__name__
    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) else None
    too_large = too_large_message(exc)
    if too_large is not None:
        # The same server would send the same body again: no retry.
        return ProviderError("response_too_large", redact(too_large)[:1000], transient=False)
    message = redact(str(exc), [api_key] if api_key else None)[:1000]
    retry_after = retry_after_from_headers(lambda name: _header(exc, name))
    if is_client_config_error(exc):
        # Raised before any byte was sent (LiteLLM wraps it as a 500): no retry can help.
        return ProviderError("config_error", message, transient=False)
    if "ContextWindowExceeded" in name or "context_length_exceeded" in message:
        return ProviderError("context_length", message, transient=False, status_code=status or 400)
    if "Timeout" in name:
        return ProviderError("timeout", message, transient=True, status_code=status)
    if name == "APIConnectionError" or "Connection error" in message:
        return ProviderError("connection", message, transient=True, status_code=status)
    if "JSONDecodeError" in name or "Expecting value" in message or "Invalid JSON" in message:
        return ProviderError("malformed_response", message, transient=True, status_code=status)
    if status == 429 or "RateLimit" in name:
        return ProviderError(
            "rate_limit", message, transient=True, status_code=429, retry_after_s=retry_after
        )
    if is_transient_status(status):
        return ProviderError(
            f"http_{status}", message, transient=True, status_code=status, retry_after_s=retry_after
        )
    if status is not None:
        return ProviderError(f"http_{status}", message, transient=False, status_code=status)
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
