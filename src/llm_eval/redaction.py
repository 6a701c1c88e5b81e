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
_URL_CREDENTIALS = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^\s/?#]+@")
"""`user:password@` (or a bare token) between a URL's scheme and its host, up to the last `@`
before the host: a password may hold an `@` of its own."""
_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")
"""Half of a UTF-16 pair alone (a proxy that cut an emoji): valid JSON, not encodable UTF-8."""
_SECRET_NAME = re.compile(r"(?i)(KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH)")
"""Names of settings and environment variables whose values are treated as secrets."""
REDACTED = "[REDACTED]"
_SECRET_WORDS = frozenset(
    {"key", "apikey", "token", "secret", "password", "passwd", "pwd", "auth", "authorization",
     "cookie", "credential", "credentials", "bearer", "signature", "session", "jwt"}
)  # fmt: skip
"""Words of a setting's name (split at `_`, `-`, `.`, case changes) that make its value secret:
`api_key`, `X-Api-Key`, `access_token`, `clientSecret`, `Cookie`; not `max_tokens`."""
_SECRET_ENDINGS = ("key", "token", "secret", "password", "passwd")
"""Endings of a word that glues them on (`apikey`, `accesstoken`)."""
_HEADER_SETTINGS = frozenset({"extra_headers", "headers", "default_headers"})
"""Settings whose every value is an HTTP header sent to the server: any may carry a key."""


_MIN_SECRET_CHARS = 6
"""Shorter values are not treated as secrets: replacing them would mangle ordinary text."""

_cached_environment: dict[bytes, bytes] = {}
_cached_registered = 0
_cached_secrets: list[str] = []
_registered: set[str] = set()


def register_secret(value: str) -> None:
    """Redact `value` from every text from now on: a provider's key (whatever its variable is
    called) or a header's value, which a server may echo in any field of its reply."""
    if len(value) >= _MIN_SECRET_CHARS:
        _registered.add(value)


def secret_values() -> list[str]:
    """Registered secrets and the values of environment variables whose names look secret
    (long enough to matter), longest first.

    Every stored text passes through `redact`, so the scan of the environment is cached and
    redone only when the environment or the registered secrets changed (a cheap comparison).
    """
    global _cached_environment, _cached_registered, _cached_secrets
    # The raw bytes mapping compares without decoding every variable.
    raw: dict[bytes, bytes] = getattr(os.environ, "_data", None) or {
        k.encode(): v.encode() for k, v in os.environ.items()
    }
    if raw != _cached_environment or len(_registered) != _cached_registered:
        found = {
            v
            for n, v in os.environ.items()
            if _SECRET_NAME.search(n) and len(v) >= _MIN_SECRET_CHARS
        }
        _cached_secrets = sorted(found | _registered, key=len, reverse=True)
        _cached_environment = dict(raw)
        _cached_registered = len(_registered)
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


def mask_uri(uri: str) -> str:
    """A URI as it may be printed: any `user:password@` shown as `***@`."""
    return _URL_CREDENTIALS.sub(r"\1***@", uri)


def has_url_credentials(url: str) -> bool:
    """Whether a URL carries a user name or password before its host."""
    return bool(_URL_CREDENTIALS.search(url))


def error_line(exc: BaseException, limit: int = 500) -> str:
    """`Type: message` of an exception for a one-line warning: first line, cut, redacted."""
    return redact(f"{type(exc).__name__}: {exc}".splitlines()[0][:limit])


def is_secret_key(name: str) -> bool:
    """Whether a setting's name says its value is a secret (see `_SECRET_WORDS`).

    A name ending in `_env` names an environment variable, which is no secret itself."""
    if name.lower().endswith("_env"):
        return False
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name).lower()
    words = re.findall(r"[a-z0-9]+", spaced)
    return any(word in _SECRET_WORDS or word.endswith(_SECRET_ENDINGS) for word in words)


def redact_settings(value: Any) -> Any:
    """Settings as they may be written: the value of a secret-named key and of every header
    replaced by the marker whatever it looks like, every other string through `redact`."""
    secrets = secret_values()
    return _redact_settings_with(value, secrets)


def _redact_settings_with(value: Any, secrets: list[str]) -> Any:
    if isinstance(value, dict):
        redacted: dict[Any, Any] = {}
        for key, item in value.items():
            name = _redact_with(key, secrets) if isinstance(key, str) else key
            if isinstance(key, str) and is_secret_key(key):
                redacted[name] = REDACTED
            elif isinstance(key, str) and key.lower() in _HEADER_SETTINGS:
                redacted[name] = _all_values_redacted(item, secrets)
            else:
                redacted[name] = _redact_settings_with(item, secrets)
        return redacted
    if isinstance(value, list | tuple):
        return [_redact_settings_with(item, secrets) for item in value]
    return _redact_with(value, secrets) if isinstance(value, str) else value


def secret_settings(value: Any) -> list[str]:
    """The strings `redact_settings` would replace whatever they look like: values of
    secret-named keys and of headers, anywhere inside `value`."""
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            name = str(key)
            if is_secret_key(name) or name.lower() in _HEADER_SETTINGS:
                found += _strings(item)
            else:
                found += secret_settings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            found += secret_settings(item)
    return found


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _strings(item)]
    if isinstance(value, list | tuple):
        return [text for item in value for text in _strings(item)]
    return []


def _all_values_redacted(headers: Any, secrets: list[str]) -> Any:
    if isinstance(headers, dict):
        return {_redact_with(str(key), secrets): REDACTED for key in headers}
    return REDACTED


def is_secret_name(name: str) -> bool:
    """Whether a setting or variable name suggests a secret value."""
    return bool(_SECRET_NAME.search(name))
