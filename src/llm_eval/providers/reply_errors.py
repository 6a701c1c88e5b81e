"""Errors a provider reports inside an HTTP 200 reply, as `ProviderError`s.

OpenRouter (and proxies like it) answer 200 and put the failure in the body: a top-level
`error` object when the call failed before generating, or `choices[0].finish_reason: "error"`
with an `error` beside it when the upstream provider failed mid-generation. Such a reply is not
a model's answer: it becomes an error row carrying the provider's words, retried as the error's
code says. Every route calls `reply_failure` on the decoded body, so they classify alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from llm_eval.errors import ProviderError
from llm_eval.providers.failures import is_transient_status
from llm_eval.redaction import redact

PARTIAL_CONTENT = "partial_content"
"""Key of `ProviderError.extra` holding the text generated before the error: kept to read,
never scored."""

_PERMANENT_CODES = frozenset(
    {"invalid_request_error", "invalid_api_key", "authentication_error", "permission_error",
     "insufficient_quota", "model_not_found", "not_found_error", "content_filter", "moderation"}
)  # fmt: skip
"""String codes (OpenAI's `code` / `type`) that the same request would get again."""


def reply_failure(body: Mapping[str, Any]) -> ProviderError | None:
    """The failure a decoded 200 reply reports, or None for an ordinary reply."""
    choice = _first_choice(body)
    error = body.get("error")
    if not error and choice.get("finish_reason") == "error":
        error = choice.get("error") or {"message": "the reply ended with finish_reason 'error'"}
    if not error:
        return None
    failure = _classified(error)
    message = choice.get("message")
    partial = message.get("content") if isinstance(message, Mapping) else None
    if isinstance(partial, str) and partial:
        failure.extra[PARTIAL_CONTENT] = partial
    return failure


def _first_choice(body: Mapping[str, Any]) -> Mapping[str, Any]:
    choices = body.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], Mapping):
        return choices[0]
    return {}


def _classified(error: object) -> ProviderError:
    """Kind and retry of an `error` object from its code: HTTP-like numbers as HTTP statuses,
    OpenAI-style names by meaning; an error without a code is taken as an upstream failure."""
    details = error if isinstance(error, Mapping) else {"message": error}
    message = _message(details)
    status = _status(details.get("code"))
    names = {str(details.get(key)).lower() for key in ("code", "type") if details.get(key)}
    if status == 429 or any("rate_limit" in name for name in names):
        return ProviderError("rate_limit", message, transient=True, status_code=429)
    if "context_length_exceeded" in names or "maximum context length" in message:
        return ProviderError("context_length", message, transient=False, status_code=status)
    if status is not None:
        transient = is_transient_status(status)
        return ProviderError(f"http_{status}", message, transient=transient, status_code=status)
    transient = not names & _PERMANENT_CODES
    return ProviderError("provider_error", message, transient=transient)


def _status(code: object) -> int | None:
    if isinstance(code, int) and not isinstance(code, bool):
        return code if 100 <= code <= 599 else None
    if isinstance(code, str) and code.isdigit():
        return _status(int(code))
    return None


def _message(details: Mapping[str, Any]) -> str:
    """The provider's words, with the upstream provider's name when the router gives it."""
    text = details.get("message")
    text = text if isinstance(text, str) and text else f"error in a 200 reply: {details!r}"
    metadata = details.get("metadata")
    upstream = metadata.get("provider_name") if isinstance(metadata, Mapping) else None
    if isinstance(upstream, str) and upstream:
        text = f"{text} (provider: {upstream})"
    return redact(text)[:1000]
