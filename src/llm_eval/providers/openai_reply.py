"""A chat-completions reply (raw JSON) as the project's `ChatResponse`.

Reads the JSON directly instead of through the SDK's typed models: the fields kept are the ones
the LiteLLM route keeps, and skipping the typed layer is much of what makes this route cheap.
"""

from __future__ import annotations

import json
from typing import Any

from llm_eval.errors import ProviderError
from llm_eval.providers.base import ChatResponse, ToolCall
from llm_eval.providers.pricing import configured_cost
from llm_eval.providers.reply_errors import reply_failure
from llm_eval.schemas import ModelConfig, Usage


def parse_reply(raw: bytes, model: ModelConfig, latency_s: float) -> ChatResponse:
    """The reply's first choice, usage and cost; a transient `ProviderError` if unusable."""
    data = _json_object(raw)
    failure = reply_failure(data)
    if failure is not None:
        raise failure
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ProviderError("empty_response", "the provider returned no choices", transient=True)
    choice = choices[0]
    message = choice.get("message")
    message = message if isinstance(message, dict) else {}
    return ChatResponse(
        content=_text(message.get("content")),
        # OpenRouter calls it `reasoning`, DeepSeek and vLLM `reasoning_content`.
        reasoning=_text(message.get("reasoning_content")) or _text(message.get("reasoning")),
        tool_calls=tool_calls(message.get("tool_calls")),
        usage=usage_of(data.get("usage"), model),
        finish_reason=_text(choice.get("finish_reason")),
        latency_s=latency_s,
    )


def _json_object(raw: bytes) -> dict[str, Any]:
    try:
        data = json.loads(raw)
    except ValueError as exc:
        message = f"Invalid JSON in the provider's reply: {exc}"
        raise ProviderError("malformed_response", message, transient=True) from None
    if not isinstance(data, dict):
        message = "Invalid JSON in the provider's reply: not an object"
        raise ProviderError("malformed_response", message, transient=True)
    return data


def tool_calls(raw: Any) -> list[ToolCall]:
    """The requested tool calls; a call without an id gets `call_<index>` as on LiteLLM."""
    calls: list[ToolCall] = []
    for index, call in enumerate(raw if isinstance(raw, list) else []):
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict):
            continue
        calls.append(
            ToolCall(
                call.get("id") or f"call_{index}",
                str(function.get("name") or ""),
                _text(function.get("arguments")) or "",
            )
        )
    return calls


def usage_of(raw: Any, model: ModelConfig) -> Usage:
    """Token counts (reasoning tokens included) and the cost from the configured prices.

    The direct route has no price table (that is LiteLLM's): a model without configured prices
    has an unknown cost, never a guessed one.
    """
    if not isinstance(raw, dict):
        return Usage()
    details = raw.get("completion_tokens_details")
    usage = Usage(
        prompt_tokens=_count(raw.get("prompt_tokens")),
        completion_tokens=_count(raw.get("completion_tokens")),
        reasoning_tokens=_count(details.get("reasoning_tokens"))
        if isinstance(details, dict)
        else None,
        total_tokens=_count(raw.get("total_tokens")),
    )
    usage.cost_usd = configured_cost(model, usage)
    usage.cost_source = "configured" if usage.cost_usd is not None else None
    return usage


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None
