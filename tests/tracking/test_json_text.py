"""The prebuilt encoders write exactly what `json.dumps` writes."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from typing import Any

import pytest

from llm_eval.tracking.json_text import ascii_json, attribute_text, unicode_json

VALUES: list[Any] = [
    "plain",
    'Καλησπέρα «εισαγωγικά» "quoted" \\ back\nslash\t\u2028 \ud800 lone',
    "",
    0,
    -(2**70),
    1.5,
    0.1 + 0.2,
    1e300,
    math.nan,
    math.inf,
    -math.inf,
    True,
    False,
    None,
    [],
    {},
    [1, "two", None, [3.25, {"k": False}]],
    {"messages": [{"role": "user", "content": "Πόσο κάνει 6 x 7;"}], "n": 2},
    {"nested": {"deeper": {"list": [{"a": math.nan}], "empty": ""}}},
    ("a", "tuple"),
    {1: "int key", 2.5: "float key", None: "none key", False: "bool key"},
]


@pytest.mark.parametrize("value", VALUES, ids=range(len(VALUES)))
def test_the_same_text_as_json_dumps(value: Any) -> None:
    assert unicode_json(value) == json.dumps(value, ensure_ascii=False)
    assert ascii_json(value) == json.dumps(value)
    assert attribute_text(value) == json.dumps(value, ensure_ascii=False, default=str)


def test_what_json_cannot_hold() -> None:
    stamp = datetime(2026, 12, 6, tzinfo=UTC)
    value = {"when": stamp, "items": [stamp]}
    assert attribute_text(value) == json.dumps(value, ensure_ascii=False, default=str)
    assert attribute_text(stamp) == json.dumps(stamp, ensure_ascii=False, default=str)
    for encode in (unicode_json, ascii_json):
        with pytest.raises(TypeError, match="datetime is not JSON serializable"):
            encode(value)
    # A failed encoding leaves nothing behind that changes the next one.
    assert unicode_json({"a": [1]}) == '{"a": [1]}'
