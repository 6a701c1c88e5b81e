"""Where a sentence ends: a full stop, but not the dot of a title, an abbreviation or an initial."""

from __future__ import annotations

import re
import unicodedata

# The marker's answer ends at the end of its sentence; a full stop inside a number ("1.5")
# or an abbreviation glued to the next word does not end it.
_SENTENCE_END_RE = re.compile(r"(?<=\S)[.!?;](?=\s|$)")
# Titles and abbreviations whose full stop does not end a sentence ("κ. Δημητρακοπούλου",
# "Mr. Hoffmann", "π.χ."); compared accent- and case-insensitively, without their dots.
_ABBREVIATIONS = frozenset(
    {
        *("κ", "κα", "κκ", "κος", "κυρ", "δρ", "δρα", "καθ", "οδ", "αρ", "τηλ", "λεωφ"),
        *("πλ", "αγ", "στ", "σελ", "βλ", "δηλ", "πχ", "κλπ", "κτλ", "κλ", "λπ"),
        *("mr", "mrs", "ms", "dr", "prof", "st", "jr", "sr", "mt", "no", "vs", "etc", "eg"),
        "ie",
    }
)
_WORD_BEFORE_DOT_RE = re.compile(r"([^\W\d_]+(?:\.[^\W\d_]+)*)$")


def sentence_end(text: str) -> re.Match[str] | None:
    """The first sentence end in `text` that is not the dot of a title or abbreviation."""
    for match in _SENTENCE_END_RE.finditer(text):
        if match.group(0) == "." and match.end() < len(text.rstrip()):
            # Abbreviations are short: look at a window before the dot, not the whole text.
            word = _WORD_BEFORE_DOT_RE.search(text, max(0, match.start() - 24), match.start())
            if word and (_is_abbreviation(word.group(1)) or _is_initial(word.group(1))):
                continue
        return match
    return None


def _is_initial(word: str) -> bool:
    """A capital initial ("Ν. Κρήνη", "Γ. Παππάς", "J. Smith"), not the end of a sentence."""
    return len(word) == 1 and word.isupper()


def _is_abbreviation(word: str) -> bool:
    folded = "".join(c for c in unicodedata.normalize("NFD", word.casefold()) if c.isalpha())
    return folded in _ABBREVIATIONS


def split_sentences(text: str) -> list[str]:
    """`text` cut after each sentence end (see `sentence_end`); the pieces keep their stops."""
    pieces: list[str] = []
    while (match := sentence_end(text)) is not None:
        pieces.append(text[: match.end()])
        text = text[match.end() :]
    return [*pieces, text] if text else pieces
