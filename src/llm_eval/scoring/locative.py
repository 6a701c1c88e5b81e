"""A place described by what stands near it: which part of the answer is the place.

Class `decoy_in_description`. «Από το περίπτερο απέναντι από το καφέ» commits to the kiosk;
the café after «απέναντι» only tells where the kiosk is, so a decoy named there does not
compete with the key. The other way round, «Από τον φούρνο, δίπλα στο περίπτερο» commits to
the bakery: the key named only after the locative word locates the decoy, and is not the
answer.
"""

from __future__ import annotations

from collections.abc import Sequence

from llm_eval.scoring.forms import form_of
from llm_eval.scoring.matchers import STOPWORDS, occurrences
from llm_eval.scoring.normalize import tokens

LOCATIVE_WORDS = frozenset(
    {"απεναντι", "διπλα", "κοντα", "πισω", "μπροστα", "πανω", "κατω", "διπλανο", "γωνια",
     "opposite", "near", "behind", "beside", "next", "across", "front"}
)  # fmt: skip
"""Folded words that open a phrase locating what was named before them."""


def _spans(needles: Sequence[str], words: tuple[str, ...], transliterate: bool) -> list[range]:
    found: list[range] = []
    for needle in needles:
        folded = tokens(needle)
        for start in occurrences(folded, words, transliterate=transliterate):
            found.append(range(start, start + len(folded)))
    return found


def _locatives(words: tuple[str, ...], decoys: list[range]) -> list[int]:
    """Positions of locative words that do not open a decoy («κάτω από τη γλάστρα» is
    itself a place the task lists)."""
    return [
        index
        for index, word in enumerate(words)
        if word in LOCATIVE_WORDS and not any(index in span for span in decoys)
    ]


def before_location(
    text: str, answers: Sequence[str], distractors: Sequence[str], *, transliterate: bool
) -> str:
    """`text` up to the first locative word after the key, when the key comes before one;
    else `text` unchanged. What follows the cut only locates the key."""
    words = tokens(text)
    locatives = _locatives(words, _spans(distractors, words, transliterate))
    if not locatives:
        return text
    keys = _spans(answers, words, transliterate)
    if not keys:
        return text
    first = min(keys, key=lambda span: span.start)
    if any(index in first for index in locatives):
        cut: int | None = first.stop  # a key that is itself a location ends its phrase
    else:
        cut = next((index for index in locatives if index >= first.stop), None)
    return text if cut is None else " ".join(words[:cut])


def locates_decoy(
    text: str, answers: Sequence[str], distractors: Sequence[str], *, transliterate: bool
) -> str | None:
    """The decoy that `text` commits to when it names the key only after a locative word
    («Από τον φούρνο, δίπλα στο περίπτερο»): a form of the decoy's word before the cue."""
    words = tokens(text)
    locatives = _locatives(words, _spans(distractors, words, transliterate))
    keys = _spans(answers, words, transliterate)
    if not locatives or not keys or min(span.start for span in keys) < locatives[0]:
        return None
    before = [word for word in words[: locatives[0]] if word not in STOPWORDS]
    for distractor in distractors:
        decoy_words = frozenset(w for w in tokens(distractor) if w not in STOPWORDS)
        if any(word in decoy_words or form_of(word, decoy_words) for word in before):
            return distractor
    return None
