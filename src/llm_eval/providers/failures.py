"""Which provider failures are worth another attempt, and how long the server asks us to wait.

Providers use these to set `ProviderError.transient` and `.retry_after_s`; the runner's retry
policy only reads those two fields.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from email.utils import parsedate_to_datetime

TRANSIENT_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})


def parse_retry_after(value: str | None) -> float | None:
    """Retry-After as seconds: either a number of seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def retry_after_from_headers(header: Callable[[str], str | None]) -> float | None:
    """The wait a reply asks for: `retry-after-ms` (OpenAI's, finer) before `Retry-After`.

    `header` looks a header up by its lower-case name; both routes pass their own lookup, so
    they read the same headers the same way.
    """
    milliseconds = header("retry-after-ms")
    if milliseconds:
        try:
            return max(0.0, float(milliseconds) / 1000)
        except ValueError:
            pass
    return parse_retry_after(header("retry-after"))


def is_transient_status(status: int | None) -> bool:
    """Rate limits, server errors and timeouts are worth another try; client errors are not."""
    return status is not None and (status in TRANSIENT_STATUS or status >= 500)


_CLIENT_URL_ERRORS = frozenset(
    {"InvalidURL", "UnsupportedProtocol", "InvalidUrlClientError", "NonHttpUrlClientError"}
)
"""HTTP clients' names for a URL they cannot use (httpx, aiohttp)."""


def is_client_config_error(exc: BaseException) -> bool:
    """Whether the first cause of `exc` is the client refusing its own settings (a bad URL,
    credentials inside the URL) rather than anything a server said."""
    seen: set[int] = set()
    root: BaseException = exc
    while id(root) not in seen:
        seen.add(id(root))
        following = root.__cause__ or root.__context__
        if following is None:
            break
        root = following
    if root is exc:
        return False
    return type(root) in (ValueError, TypeError) or type(root).__name__ in _CLIENT_URL_ERRORS
