"""JSON text as `json.dumps` writes it, with the encoder built once instead of per call.

Writing a record encodes a handful of small values per stored row (span attributes, span
documents). `json.dumps` and `JSONEncoder.encode` set up a new C encoder on every call,
which cost as much as the encoding itself for values this small; here each encoder is made
once and called directly. The text is the same, byte for byte: same separators, same
spelling of floats, NaN and infinity (`tests/tracking/test_json_text.py`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from json.encoder import encode_basestring, encode_basestring_ascii
from typing import Any

try:
    from json.encoder import c_make_encoder  # type: ignore[attr-defined]
except ImportError:  # an interpreter without json's C accelerator
    c_make_encoder = None

__all__ = ["ascii_json", "attribute_text", "unicode_json"]


def _encoder(*, ensure_ascii: bool, default: Callable[[Any], Any] | None) -> Callable[[Any], str]:
    """`json.JSONEncoder(ensure_ascii=..., default=...).encode`, made once."""
    if c_make_encoder is None:
        return json.JSONEncoder(ensure_ascii=ensure_ascii, default=default).encode
    strings = encode_basestring_ascii if ensure_ascii else encode_basestring
    # No circular-reference markers: the values come from parsed JSON or plain dicts and
    # lists, which cannot refer to themselves.
    make = c_make_encoder(None, default, strings, None, ": ", ", ", False, False, True)

    def encode(value: Any) -> str:
        if isinstance(value, str):  # what JSONEncoder.encode does before encoding
            return strings(value)
        return "".join(make(value, 0))

    return encode


def _refuse(value: Any) -> Any:
    """What `JSONEncoder.default` does: refuse a value JSON cannot hold."""
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


unicode_json = _encoder(ensure_ascii=False, default=_refuse)
"""`json.dumps(value, ensure_ascii=False)`."""
ascii_json = _encoder(ensure_ascii=True, default=_refuse)
"""`json.dumps(value)`."""
_lenient_json = _encoder(ensure_ascii=False, default=str)


def attribute_text(value: Any) -> str:
    """`json.dumps(value, ensure_ascii=False, default=str)`, as MLflow encodes a span
    attribute; a string, a boolean, a whole or finite number without the encoder at all
    (these are the encoder's own spellings of them, and most attributes are such)."""
    kind = type(value)
    if kind is str:
        return encode_basestring(value)
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return int.__repr__(value)
    if kind is float and math.isfinite(value):
        return float.__repr__(value)
    return _lenient_json(value)
