"""Shortcuts on greek_messages: "answer the candidate the passage mentions most often" must
not win much more often than chance.

Candidates are a task's key and its decoys (`distractors`). A mention is a place in the
passage where a candidate appears as whole words, case and accents folded; the key's accepted
forms are the key too, but one place matched by two forms (`Λίνα` and `λινα`, or a phrase and a
word inside it) is one mention. Among tasks whose passage holds the key and at least one
decoy, the most-mentioned candidate scores 1 when it is the key alone, 1/k when the key ties
with k-1 others.

Counting the key's forms separately at each place, as an earlier review did, gives 63%: most
of it is the same words counted two or three times (an accent-free copy of the key in
`accepted_answers` matches every place the key does).
"""

from __future__ import annotations

import re
import unicodedata

from llm_eval.schemas import SingleTurnTask
from tests.config.test_greek_sets import TASKS, passage

CEILING = 0.40


def fold(text: str) -> str:
    stripped = unicodedata.normalize("NFD", text.casefold())
    return "".join(c for c in stripped if unicodedata.category(c) != "Mn")


def mentions(text: str, forms: list[str]) -> int:
    """Places in `text` (folded) where any of `forms` appears as whole words, each once."""
    found: set[tuple[int, int]] = set()
    for form in filter(None, (fold(f).strip() for f in forms)):
        pattern = r"(?<!\w)" + re.escape(form) + r"(?!\w)"
        found |= {(m.start(), m.end()) for m in re.finditer(pattern, text)}
    inside = {s for s in found for o in found if o != s and o[0] <= s[0] and s[1] <= o[1]}
    return len(found - inside)


def shortcut_credit(task: SingleTurnTask) -> tuple[float, float] | None:
    """(the shortcut's credit, chance's credit) on `task`, or None when its passage does not
    hold the key and a decoy."""
    text = fold(passage(task))
    key = mentions(text, [task.answer, *task.accepted_answers])
    decoys = [mentions(text, [d]) for d in task.distractors if fold(d) != fold(task.answer)]
    present = [n for n in decoys if n]
    if not key or not present:
        return None
    top = max(key, *present)
    tied = 1 + sum(n == top for n in present)
    return (1 / tied if key == top else 0.0), 1 / (1 + len(present))


def test_one_place_is_one_mention_whatever_forms_match_it() -> None:
    text = fold("Η Λίνα είπε στη λινα ότι η κυρία Λίνα Κ. έρχεται")
    assert mentions(text, ["Λίνα", "λινα"]) == 3
    assert mentions(text, ["Λίνα", "Λίνα Κ."]) == 3
    assert mentions(text, ["Λίν"]) == 0  # whole words only


def test_the_most_mentioned_candidate_is_rarely_the_key() -> None:
    credits = [c for c in map(shortcut_credit, TASKS["greek_messages"]) if c is not None]
    assert len(credits) >= 100
    rate = sum(c[0] for c in credits) / len(credits)
    chance = sum(c[1] for c in credits) / len(credits)
    assert rate <= CEILING, (round(rate, 3), round(chance, 3))
    assert rate <= chance + 0.05, (round(rate, 3), round(chance, 3))
