"""Keep secrets out of everything written: traces, logs, reports, MLflow."""

from __future__ import annotations

import os
import re
from typing import Any

_KEY_PATTERNS = [
    (("sk-",), re.compile(r"sk-[A-Za-z0-9_\-]{8,}")),
    (("bearer",), re.compile(r"(?i)(bearer\s+)[A-Za-z0-9_\-\.=]{8,}")),
    (
        ("api", "authorization", "token"),
        re.compile(
            r"(?i)((?:api[_-]?key|authorization|token)[\"']?\s*[:=]\s*[\"']?)[^\s\"',}]{6,}"
        ),
    ),
]
"""Key-shaped strings, each with the words (lower case) it cannot match without: a plain
substring test spares most texts the slower pattern."""
_URL_CREDENTIALS = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^\s/?#@]+@")
"""`user:password@` (or a bare token) between a URL's scheme and its host."""
_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")
"""Half of a UTF-16 pair alone (a proxy that cut an emoji): valid JSON, not encodable UTF-8."""
_SECRET_NAME = re.compile(r"(?i)(KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH)")
"""Names of settings and environment variables whose values are treated as secrets."""
REDACTED = "[REDACTED]"


_cached_environment: dict[bytes, bytes] = {}
_cached_secrets: list[str] = []


def secret_values() -> list[str]:
    """Values of environment variables whose names look secret (long enough to matter).

    Every stored text passes through `redact`, so the scan of the environment is cached and
    redone only when the environment changed (a cheap dict comparison).
    """
    global _cached_environment, _cached_secrets
    # The raw bytes mapping compares without decoding every variable.
    raw: dict[bytes, bytes] = getattr(os.environ, "_data", None) or {
        k.encode(): v.encode() for k, v in os.environ.items()
    }
    if raw != _cached_environment:
        _cached_secrets = sorted(
            (v for n, v in os.environ.items() if _SECRET_NAME.search(n) and len(v) >= 6),
            key=len,
            reverse=True,
        )
        _cached_environment = dict(raw)
    return _cached_secrets


def redact(text: str, extra_secrets: list[str] | None = None) -> str:
    """The text as it may be stored: known secret values, key-shaped strings and URL
    credentials replaced by a marker, lone surrogates escaped (`\\ud800`).

    Every stored text passes here, so this is also where a text becomes writable as UTF-8.
    """
    return _redact_with(text, [*(extra_secrets or []), *secret_values()])


def redact_data(value: Any) -> Any:
    """`value` with every string inside it (mapping keys too) passed through `redact`."""
    return _redact_data_with(value, secret_values())


def _redact_data_with(value: Any, secrets: list[str]) -> Any:
    if isinstance(value, str):
        return _redact_with(value, secrets)
    if isinstance(value, dict):
        return {
            _redact_data_with(key, secrets): _redact_data_with(item, secrets)
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [_redact_data_with(item, secrets) for item in value]
    return value


def _redact_with(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        if secret and secret in text:
            text = text.replace(secret, REDACTED)
    folded = text.lower()
    for needles, pattern in _KEY_PATTERNS:
        if any(needle in folded for needle in needles):
            text = pattern.sub(lambda m: (m.group(1) if m.groups() else "") + REDACTED, text)
    if "://" in text:  # the plain test spares most texts the slower pattern
        text = _URL_CREDENTIALS.sub(r"\1***@", text)
    return text if text.isascii() else escape_lone_surrogates(text)


def escape_lone_surrogates(text: str) -> str:
    """Lone surrogates as their `\\uXXXX` escape text; every other character kept."""
    if not _LONE_SURROGATE.search(text):
        return text
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def has_url_credentials(url: str) -> bool:
    """Whether a URL carries a user name or password before its host."""
    return bool(_URL_CREDENTIALS.search(url))


def error_line(exc: BaseException, limit: int = 500) -> str:
    """`Type: message` of an exception for a one-line warning: first line, cut, redacted."""
    return redact(f"{type(exc).__name__}: {exc}".splitlines()[0][:limit])


def is_secret_name(name: str) -> bool:
    """Whether a setting or variable name suggests a secret value."""
    return bool(_SECRET_NAME.search(name))
