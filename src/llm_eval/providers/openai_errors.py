"""The `openai` SDK's exceptions as `ProviderError`s, classified as on the LiteLLM route.

Kinds, transience, status codes and Retry-After agree with `litellm_client.classify_exception`
for the same server reply, so retries, fail-fast and error rows do not depend on the route.
"""

from __future__ import annotations

from typing import Any

from llm_eval.errors import ProviderError
from llm_eval.providers.body_limits import find_too_large
from llm_eval.providers.failures import (
    is_client_config_error,
    is_transient_status,
    retry_after_from_headers,
)
from llm_eval.redaction import redact

_CONTEXT_MARKERS = ("context_length_exceeded", "maximum context length")


def classify_sdk_error(exc: Exception, api_key: str = "") -> ProviderError:
    """An exception raised by the SDK (or its transport) as a `ProviderError`."""
    import openai

    secrets = [api_key] if api_key else None
    too_large = find_too_large(exc)
    if too_large is not None:
        # The same server would send the same body again: no retry.
        return ProviderError("response_too_large", str(too_large), transient=False)
    message = redact(str(exc), secrets)[:1000]
    if is_client_config_error(exc):
        # The client refused its own settings (a bad URL) before sending: no retry can help.
        return ProviderError("config_error", message, transient=False)
    dropped = _dropped_connection(exc)
    if isinstance(exc, openai.APITimeoutError) and dropped is None:
        return ProviderError("timeout", message, transient=True)
    if isinstance(exc, openai.APIConnectionError):
        if dropped is not None:
            message = redact(f"Connection error: {type(dropped).__name__}: {dropped}", secrets)
        return ProviderError("connection", message[:1000], transient=True)
    if isinstance(exc, openai.APIStatusError):
        return status_error(exc.status_code, message, exc.response.headers.get, exc.body)
    return ProviderError(type(exc).__name__, message, transient=False)


def status_error(
    status: int, message: str, header: Any, body: object | None = None
) -> ProviderError:
    """An HTTP error reply: context length, rate limit, transient server error or fail-fast."""
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


def _dropped_connection(exc: BaseException) -> BaseException | None:
    """Whether a "timeout" is really a connection the server closed or refused.

    The aiohttp transport reports every aiohttp connection error as a connect timeout; the
    underlying cause (returned) tells a closed connection from a server that took too long.
    """
    import aiohttp

    cause = exc.__cause__ or exc.__context__
    while cause is not None:
        if isinstance(cause, aiohttp.ClientConnectionError):
            return None if isinstance(cause, aiohttp.ServerTimeoutError | TimeoutError) else cause
        cause = cause.__cause__ or cause.__context__
    return None


def _is_context_length(message: str, body: object | None) -> bool:
    code = body.get("code") if isinstance(body, dict) else None
    return code == "context_length_exceeded" or any(m in message for m in _CONTEXT_MARKERS)
