"""The OpenAI chat-completions protocol: the request sent, and what a reply or a failure means.

Both routes to a chat-completions server decide here. The direct route builds its body and
headers with `request_body` / `request_headers` and reads the reply's JSON with `parse_reply`;
the LiteLLM route hands LiteLLM the same settings and reads LiteLLM's normalised reply (the
same JSON shape) with `reply_from_data`. A failure of either route becomes a `ProviderError`
here: `status_error` for an HTTP error reply, `transport_error` for a request that got none.
So error kinds, retries, usage, reasoning tokens and costs never depend on the route.

Model strings keep LiteLLM's form (`openai/NAME` with an `api_base`, `openrouter/NAME`) and
lose their route prefix on the wire, as LiteLLM sends them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from llm_eval.errors import ProviderError
from llm_eval.providers.base import ChatRequest, ChatResponse, ToolCall
from llm_eval.providers.failures import is_transient_status, retry_after_from_headers
from llm_eval.providers.pricing import configured_cost
from llm_eval.providers.reasoning import reasoning_params
from llm_eval.providers.reply_errors import reply_failure
from llm_eval.providers.usage_counts import token_count, total_tokens
from llm_eval.schemas import ModelConfig, Usage

PROTOCOL = "openai-chat"
"""The protocol's name as providers declare it (`Provider.wire_protocol`): providers that
speak it send the same request for the same model entry, so they share cache keys and
resumes."""
OPENROUTER_BASE = "https://openrouter.ai/api/v1"
"""Where `openrouter/` models go when the entry names no `api_base` (LiteLLM's default too)."""

_ROUTE_PREFIXES = ("openai/", "openrouter/")
_CONTEXT_MARKERS = ("context_length_exceeded", "maximum context length")
_TRANSIENT_TRANSPORT = frozenset({"timeout", "connection", "malformed_response"})
HeaderLookup = Callable[[str], str | None]

# -- request ---------------------------------------------------------------------------------


def is_openrouter(model: ModelConfig) -> bool:
    """OpenRouter models get its usage accounting switched on, as LiteLLM does."""
    return model.model.startswith("openrouter/")


def wire_model(model: ModelConfig) -> str:
    """The model name the server sees: the LiteLLM route prefix removed."""
    for prefix in _ROUTE_PREFIXES:
        if model.model.startswith(prefix):
            return model.model[len(prefix) :]
    return model.model


def endpoint_base(model: ModelConfig) -> str | None:
    """The server's base URL (`.../v1`), or None when the entry cannot name one."""
    if model.api_base:
        return model.api_base.rstrip("/")
    return OPENROUTER_BASE if is_openrouter(model) else None


def api_base_problem(model: ModelConfig) -> str | None:
    """Why the entry's endpoint is unusable, or None."""
    base = endpoint_base(model)
    if base is None:
        return "an openai_compatible model needs api_base (e.g. http://127.0.0.1:8080/v1)"
    parts = urlsplit(base)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"api_base {base!r} is not an http(s) URL with a host"
    return None


def request_body(request: ChatRequest, fixed: dict[str, Any] | None = None) -> dict[str, Any]:
    """The chat-completions body, with the parameters LiteLLM would send for this entry;
    `fixed` is `fixed_body_fields(request.model)` when the caller keeps it."""
    body: dict[str, Any] = {
        "model": wire_model(request.model),
        "messages": request.messages,
        "max_tokens": request.max_tokens,
    }
    if request.tools:
        body["tools"] = request.tools
    body.update(fixed_body_fields(request.model) if fixed is None else fixed)
    return body


def fixed_body_fields(model: ModelConfig) -> dict[str, Any]:
    """The body's fields that depend on the model entry alone (not on the call): temperature,
    OpenRouter's usage switch, the thinking budget and `extra_params`. Constant per model, so
    the direct route computes them once."""
    body: dict[str, Any] = {}
    if model.temperature is not None:
        body["temperature"] = model.temperature
    if is_openrouter(model):
        body["usage"] = {"include": True}  # OpenRouter reports usage only when asked
    _merge(body, reasoning_params(model))
    _merge(body, model.extra_params)
    return body


def request_headers(model: ModelConfig) -> dict[str, str]:
    """`extra_params.extra_headers`: sent as HTTP headers on both routes (LiteLLM passes its
    `extra_headers` argument on as headers)."""
    headers = model.extra_params.get("extra_headers")
    if not isinstance(headers, dict):
        return {}
    return {str(name): str(value) for name, value in headers.items()}


def _merge(body: dict[str, Any], params: dict[str, Any]) -> None:
    """Add parameters; an `extra_body` is flattened into the body, as the SDK would send it;
    `extra_headers` are headers, not body (`request_headers`)."""
    for key, value in params.items():
        if key == "extra_body" and isinstance(value, dict):
            body.update(value)
        elif key != "extra_headers":
            body[key] = value


# -- reply -----------------------------------------------------------------------------------


def parse_reply(raw: bytes, model: ModelConfig, latency_s: float) -> ChatResponse:
    """A reply's raw JSON as a `ChatResponse`; a transient `ProviderError` if unusable."""
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise malformed(f"Invalid JSON in the provider's reply: {exc}") from None
    if not isinstance(data, dict):
        raise malformed("Invalid JSON in the provider's reply: not an object")
    failure = reply_failure(data)  # an error inside an HTTP 200 reply (OpenRouter documents it)
    if failure is not None:
        raise failure
    return reply_from_data(data, model, latency_s)


def reply_from_data(data: dict[str, Any], model: ModelConfig, latency_s: float) -> ChatResponse:
    """The reply's first choice, usage and cost (reads the JSON directly: skipping a typed
    layer is much of what makes the direct route cheap)."""
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


def malformed(message: str) -> ProviderError:
    """A reply that is no JSON object."""
    return transport_error("malformed_response", message)


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

    A model without configured prices has an unknown cost here; the LiteLLM route may then
    fill it from LiteLLM's price table. A count that is negative, missing or past any context
    window is unknown, never subtracted; a missing total is the sum of its parts when both
    are known.
    """
    if not isinstance(raw, dict):
        return Usage()
    details = raw.get("completion_tokens_details")
    prompt = token_count(raw.get("prompt_tokens"))
    completion = token_count(raw.get("completion_tokens"))
    usage = Usage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        reasoning_tokens=token_count(details.get("reasoning_tokens"))
        if isinstance(details, dict)
        else None,
        total_tokens=total_tokens(raw.get("total_tokens"), prompt, completion),
    )
    usage.cost_usd = configured_cost(model, usage)
    usage.cost_source = "configured" if usage.cost_usd is not None else None
    return usage


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


# -- failures --------------------------------------------------------------------------------


def error_reply_message(status: int, raw: bytes) -> tuple[str, object | None]:
    """The message and error object of an HTTP error reply, worded as the openai SDK words
    them (`Error code: 429 - <the body's error.message>`), so rows read alike on both routes."""
    text = raw.decode("utf-8", "replace").strip()
    body: object | None = text
    message = f"Error code: {status}"
    try:
        body = json.loads(text)
    except ValueError:
        return message, body
    error = body.get("error", body) if isinstance(body, dict) else None
    detail = error.get("message") if isinstance(error, dict) else None
    if isinstance(detail, str) and detail:
        message += f" - {detail}"
    return message, error if isinstance(body, dict) else body


def status_error(
    status: int, message: str, header: HeaderLookup, body: object | None = None
) -> ProviderError:
    """An HTTP error reply: context length, rate limit, transient server error or fail-fast.

    `body` is the reply's error object (or any JSON it sent); `header` looks a reply header
    up by its lower-case name.
    """
    if status == 400 and _is_context_length(message, body):
        return ProviderError("context_length", message, transient=False, status_code=400)
    if status == 429:
        retry_after = retry_after_from_headers(header)
        return ProviderError(
            "rate_limit", message, transient=True, status_code=429, retry_after_s=retry_after
        )
    if is_transient_status(status):
        retry_after = retry_after_from_headers(header)
        return ProviderError(
            f"http_{status}", message, transient=True, status_code=status, retry_after_s=retry_after
        )
    return ProviderError(f"http_{status}", message, transient=False, status_code=status)


def transport_error(kind: str, message: str, status: int | None = None) -> ProviderError:
    """A call that got no usable reply: `timeout`, `connection` and `malformed_response` (a
    cut or garbled body) are worth another try; `config_error` (the client refused its own
    settings) and `response_too_large` (the same server would send the same body again) are
    not."""
    transient = kind in _TRANSIENT_TRANSPORT
    return ProviderError(kind, message, transient=transient, status_code=status)


def _is_context_length(message: str, body: object | None) -> bool:
    code = body.get("code") if isinstance(body, dict) else None
    return code == "context_length_exceeded" or any(m in message for m in _CONTEXT_MARKERS)
