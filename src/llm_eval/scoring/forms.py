"""Forms of one answer the task files do not list: ordinals in digits and inflected Greek names.

Ordinals. «δεύτερος», «2ος», «2η», "second" and "2nd" are one ordinal; the first ordinal a
reply commits to decides, whatever its gender or case.

Names. A Greek name is declined: «Μαρίνος» is «του Μαρίνου», «τον Μαρίνο»; «Ευρυδίκη» is
«της Ευρυδίκης». A form of the key's name is the key, unless it is also a form of a decoy's
name («Χάρη» is the genitive of «Χάρης» and the name «Χάρη» itself): then the rules cannot
tell which one the reply means.
"""

from __future__ import annotations

import re
from functools import lru_cache

from llm_eval.scoring.matchers import content_tokens
from llm_eval.scoring.normalize import tokens

_GREEK_ORDINAL_STEMS = (
    ("πρωτ", 1), ("δευτερ", 2), ("τριτ", 3), ("τεταρτ", 4), ("πεμπτ", 5),
    ("εβδομ", 7), ("ογδο", 8), ("ενατ", 9), ("δεκατ", 10),
)  # fmt: skip
_GREEK_ORDINAL_ENDINGS = frozenset({"οσ", "η", "ο", "ου", "ησ", "ον", "ην", "οι", "εσ", "ων"})
_ENGLISH_ORDINALS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
    "eighth": 8, "ninth": 9, "tenth": 10,
}  # fmt: skip
# A digit ordinal as folded tokens see it: "2οσ", "2η", "2nd", "1st", "3rd", "4th", "2ο".
_DIGIT_ORDINAL_RE = re.compile(r"(\d{1,3})(οσ|ησ|ου|ον|ην|οι|εσ|ων|η|ο|α|st|nd|rd|th|η)")
_ORDINAL_SUFFIX_RE = re.compile(r"^(οσ|ησ|ου|ον|ην|οι|εσ|ων|η|ο|α|st|nd|rd|th)$")


def _word_ordinal(token: str) -> int | None:
    if token in _ENGLISH_ORDINALS:
        return _ENGLISH_ORDINALS[token]
    for stem, value in _GREEK_ORDINAL_STEMS:
        if token.startswith(stem) and token[len(stem) :] in _GREEK_ORDINAL_ENDINGS:
            return value
    return None


@lru_cache(maxsize=16384)
def ordinals_in(text: str) -> tuple[int, ...]:
    """The ordinals `text` names, in order: words («δεύτερη», "third") and digits («2ος»)."""
    words = tokens(text)
    found: list[int] = []
    for index, word in enumerate(words):
        digit = _DIGIT_ORDINAL_RE.fullmatch(word)
        if digit is not None:
            found.append(int(digit.group(1)))
        elif (
            word.isdigit() and index + 1 < len(words) and _ORDINAL_SUFFIX_RE.match(words[index + 1])
        ):
            found.append(int(word))  # "2 ος" split by the tokenizer
        elif (value := _word_ordinal(word)) is not None:
            found.append(value)
    return tuple(found)


def answer_ordinal(answer: str) -> int | None:
    """The ordinal an expected answer is («δεύτερος», "2nd", «2η θέση»), or None.

    A capitalised word is a name, not an ordinal: «Τρίτη» is Tuesday.
    """
    if any(word[0].isupper() for word in re.findall(r"[^\W\d_]+", answer)):
        return None
    found = ordinals_in(answer)
    return found[0] if len(found) == 1 else None


# Folded endings (accents removed, final sigma as σ) of the cases of Greek first names, one
# tuple per declension: «Μαρίνος, Μαρίνου, Μαρίνο, Μαρίνε», «Κώστας, Κώστα», «Ευρυδίκη,
# Ευρυδίκης». A name in any of its cases stands for all of them.
_DECLENSIONS = (
    ("οσ", "ου", "ο", "ε"),
    ("ασ", "α"),
    ("ησ", "η"),
    ("ω", "ωσ"),
    ("ου", "ουσ"),
    ("ισ", "ι"),  # «Πάρις, τον Πάρι»
)
_GREEK_WORD_RE = re.compile(r"^[α-ωσ]+$")


@lru_cache(maxsize=16384)
def name_forms(name: str) -> frozenset[str]:
    """The folded case forms of a one-word Greek name, the name itself included."""
    if not _GREEK_WORD_RE.match(name) or len(name) < 3:
        return frozenset({name})
    forms = {name}
    for endings in _DECLENSIONS:
        ending = next((e for e in sorted(endings, key=len, reverse=True) if name.endswith(e)), None)
        if ending is not None:
            stem = name[: -len(ending)]
            forms.update(stem + other for other in endings)
    return frozenset(forms)


_GENITIVE_ARTICLES = frozenset({"του", "στου", "απο του"})


def declined(answer: str) -> bool:
    """Whether the name an answer holds is declined: a surname in -ου or -άκη written without
    «του» («Δημητρακοπούλου», a woman's name) keeps one form in every case."""
    token = name_token(answer)
    if token is None:
        return False
    if token.endswith("ου"):
        words = tokens(answer)
        return len(words) > 1 and words[words.index(token) - 1] in _GENITIVE_ARTICLES
    return True


_CASE_WORDS = frozenset(
    {"του", "τησ", "τον", "την", "τη", "το", "στου", "στησ", "στον", "στην", "στη", "στο",
     "ο", "η", "απο", "με", "για", "σε", "μαζι", "κυριε", "κυρια", "κ"}
)  # fmt: skip
"""Articles and prepositions that set the case of the name after them («του», «στης»)."""


def governed(words: tuple[str, ...], index: int) -> bool:
    """Whether the word at `index` follows an article or preposition that sets its case."""
    return index > 0 and words[index - 1] in _CASE_WORDS


def name_token(answer: str) -> str | None:
    """The folded name an expected answer is («Μαρίνος», «του Μαρίνου»): one capitalised
    content word, perhaps with an article; None for anything else."""
    words = re.findall(r"[^\W\d_]+", answer)
    capitalised = [word for word in words if word[0].isupper()]
    if len(capitalised) != 1:
        return None
    content = content_tokens(answer)
    folded = tokens(capitalised[0])
    return folded[0] if len(content) == 1 and content == folded else None


def is_name(answer: str) -> bool:
    """Whether an expected answer is one Greek or Latin name, perhaps with an article."""
    return name_token(answer) is not None


def form_of(word: str, names: frozenset[str]) -> bool:
    """Whether the folded `word` is a case form of one of the folded `names`."""
    return any(word in name_forms(name) for name in names)
