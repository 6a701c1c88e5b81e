"""The JSON body and endpoint of a chat request on the direct OpenAI-compatible route.

The body holds the same parameters LiteLLM sends for the same model entry, so the two routes
ask the server the same question: model strings keep LiteLLM's form (`openai/NAME` with an
`api_base`, `openrouter/NAME`) and lose their route prefix on the wire as they do there.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from llm_eval.providers.base import ChatRequest
from llm_eval.providers.reasoning import reasoning_params
from llm_eval.schemas import ModelConfig

OPENROUTER_BASE = "https://openrouter.ai/api/v1"
"""Where `openrouter/` models go when the entry names no `api_base` (LiteLLM's default too)."""

_ROUTE_PREFIXES = ("openai/", "openrouter/")


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


def request_body(request: ChatRequest) -> dict[str, Any]:
    """The chat-completions body, with the parameters LiteLLM would send for this entry."""
    model = request.model
    body: dict[str, Any] = {
        "model": wire_model(model),
        "messages": request.messages,
        "max_tokens": request.max_tokens,
    }
    if model.temperature is not None:
        body["temperature"] = model.temperature
    if request.tools:
        body["tools"] = request.tools
    if is_openrouter(model):
        body["usage"] = {"include": True}  # OpenRouter reports usage only when asked
    _merge(body, reasoning_params(model))
    _merge(body, model.extra_params)
    return body


def request_headers(model: ModelConfig) -> dict[str, str] | None:
    """`extra_params.extra_headers`: sent as HTTP headers, as LiteLLM sends them."""
    headers = model.extra_params.get("extra_headers")
    if not isinstance(headers, dict) or not headers:
        return None
    return {str(name): str(value) for name, value in headers.items()}


def _merge(body: dict[str, Any], params: dict[str, Any]) -> None:
    """Add parameters; an `extra_body` is flattened into the body, as the SDK would send it;
    `extra_headers` are headers, not body (`request_headers`)."""
    for key, value in params.items():
        if key == "extra_body" and isinstance(value, dict):
            body.update(value)
        elif key == "extra_headers":
            continue
        else:
            body[key] = value
