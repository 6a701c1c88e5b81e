"""Times of day however a reply writes them: «15:00», «3 μ.μ.», «στις 3 το απόγευμα», "3pm".

Class `clock_time`. When the key is a time on the 24-hour clock (`HH:MM`), a reply that
states a time of day in another way is read as minutes after midnight: an hour with a part
of the day («το μεσημέρι», «το βράδυ», "pm") is put on the 24-hour clock. A bare hour with
no part of the day («στις 3») is left to the other rules: it could be 03:00 or 15:00.
"""

from __future__ import annotations

import re

from llm_eval.scoring.normalize import fold, word_value

_KEY_RE = re.compile(r"^\s*(\d{1,2})[:.](\d{2})\s*$")
_HOUR = r"(\d{1,2}|[^\W\d_]+)"
_TIME_RE = re.compile(
    rf"(?<![^\W_]){_HOUR}(?:[:.](\d{{2}}))?\s*"
    r"(?:η ωρα\s+)?(?:(?:το|τη|την)\s+)?"
    r"(πρωι|μεσημερι|απογευμα|βραδυ|μ\.?\s?μ\.?|π\.?\s?μ\.?|a\.?m\.?|p\.?m\.?)(?![^\W_])"
    r"|(?<![\d.:])(\d{1,2})[:.](\d{2})(?![\d.:])"
)
_AFTERNOON = frozenset({"μεσημερι", "απογευμα", "βραδυ", "μμ", "pm"})
_DAY_MINUTES = 24 * 60
_NOON = 12


def key_minutes(answer: str) -> int | None:
    """The key as minutes after midnight when it is a `HH:MM` time, else None."""
    match = _KEY_RE.match(answer)
    if match is None:
        return None
    hour, minute = int(match.group(1)), int(match.group(2))
    return hour * 60 + minute if hour < 24 and minute < 60 else None


def _hour(word: str) -> int | None:
    return int(word) if word.isdigit() else word_value(word)


def times_in(text: str) -> list[int]:
    """The times of day `text` states, as minutes after midnight, in order."""
    found: list[int] = []
    for match in _TIME_RE.finditer(fold(text)):
        if match.group(4) is not None:
            hour, minute = int(match.group(4)), int(match.group(5))
        else:
            value = _hour(match.group(1))
            if value is None:
                continue
            hour, minute = value, int(match.group(2) or 0)
            part = re.sub(r"[.\s]", "", match.group(3))
            if part in _AFTERNOON and hour < _NOON:
                hour += _NOON
            elif part in ("πμ", "am") and hour == _NOON:
                hour = 0
        if hour < 24 and minute < 60:
            found.append((hour * 60 + minute) % _DAY_MINUTES)
    return found
