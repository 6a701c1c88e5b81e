"""Keep secrets out of everything written: traces, logs, reports, MLflow."""

from __future__ import annotations

import os
import re

_KEY_PATTERNS = [
    re.compile(r"sk-[A-Za-z0-9_\-]{8,}"),
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9_\-\.=]{8,}"),
    re.compile(r"(?i)((?:api[_-]?key|authorization|token)[\"']?\s*[:=]\s*[\"']?)[^\s\"',}]{6,}"),
]
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
    """Replace known secret values and key-shaped strings with a marker."""
    for secret in [*(extra_secrets or []), *secret_values()]:
        if secret:
            text = text.replace(secret, REDACTED)
    for pattern in _KEY_PATTERNS:
        text = pattern.sub(lambda m: (m.group(1) if m.groups() else "") + REDACTED, text)
    return text


def error_line(exc: BaseException, limit: int = 500) -> str:
    """`Type: message` of an exception for a one-line warning: first line, cut, redacted."""
    return redact(f"{type(exc).__name__}: {exc}".splitlines()[0][:limit])


def is_secret_name(name: str) -> bool:
    """Whether a setting or variable name suggests a secret value."""
    return bool(_SECRET_NAME.search(name))
