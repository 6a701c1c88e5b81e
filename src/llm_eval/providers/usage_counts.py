"""Token counts and costs as a provider reports them, checked before anything adds them up.

A provider's `usage` is its word, not a measurement: a negative count would refund a spending
cap, a missing total would count as nothing, and a count beyond any context window is a bug
on the other side. Each of those is recorded as unknown (None), never as a number.
"""

from __future__ import annotations

import math
from typing import Any

MAX_TOKENS_PER_CALL = 100_000_000
"""More tokens than any model's context window holds: a count past it is not believed."""


def token_count(value: Any) -> int | None:
    """`value` if it is a plausible token count (an int from 0 to `MAX_TOKENS_PER_CALL`)."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if 0 <= value <= MAX_TOKENS_PER_CALL else None


def total_tokens(total: Any, prompt: int | None, completion: int | None) -> int | None:
    """The reported total if plausible, else the sum of both parts when both are known."""
    counted = token_count(total)
    if counted is not None:
        return counted
    if prompt is None or completion is None:
        return None
    return token_count(prompt + completion)


def cost(value: Any) -> float | None:
    """`value` as USD if it is a finite, non-negative number, else unknown."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) and number >= 0 else None
