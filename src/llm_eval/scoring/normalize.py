"""Text normalisation for answer matching: folding, tokens, Greek/Latin skeletons, numbers.

Everything here is pure and cached: the same answer is normalised once per process, and
the tables are built at import time so scoring a response costs a few regex passes.
"""

from __future__ import annotations

import re
import unicodedata
from fractions import Fraction
from functools import lru_cache
from typing import Literal

Script = Literal["greek", "latin", "mixed", "number", "other"]

_GREEK_RANGE = "\u0370-\u03ff\u1f00-\u1fff"
_GREEK_LETTER_RE = re.compile(f"[{_GREEK_RANGE}]")
_LATIN_LETTER_RE = re.compile(r"[A-Za-z\u00c0-\u024f]")
# A word made of letters only (digits are not lookalikes and never get repaired).
_LETTER_WORD_RE = re.compile(r"[^\W\d_]+")
# A token is a number (with its sign, and decimal/time separators kept inside it, so "1.5"
# never yields a "5" and "10:30" stays one token) unless letters follow, or a run of letters
# and digits ("3rd", "12η", "5g", "8a" stay whole words). The atomic group stops "12η"
# from being split into "1" and "2η".
_TOKEN_RE = re.compile(r"(?<![^\W_])[-−]?(?>\d+(?:[.,:]\d+)*)(?![^\W_])|[^\W_]+")
_NUMBER_TOKEN_RE = re.compile(r"[-−]?\d+(?:[.,:]\d+)*")

# Latin letters that look like Greek ones. Inside a word that also has Greek letters they
# are almost always keyboard-layout slips or homoglyphs ("Kαλησπερα", "EPΘEI"), so they
# are read as the Greek letter they imitate, case by case (P is rho, not pi).
_LOOKALIKES = str.maketrans(
    "ABEHIKMNOPTXYZaeikoptuvx",
    "ΑΒΕΗΙΚΜΝΟΡΤΧΥΖαεικορτυνχ",
)


# NFD then deleting combining marks is several times faster than a translate table.
_COMBINING_RE = re.compile("[\u0300-\u036f]+")

LATEX_TEXT_RE = re.compile(
    r"\\(?:text|textbf|textit|mathrm|mathbf|mbox|operatorname)\s*\{([^{}]*)\}"
)
"""A LaTeX text-style command around plain content (`\\text{cm}`, `\\mathbf{7}`)."""


def _repair_mixed_word(match: re.Match[str]) -> str:
    word = match.group(0)
    if _GREEK_LETTER_RE.search(word) and _LATIN_LETTER_RE.search(word):
        return word.translate(_LOOKALIKES)
    return word


def fold(text: str) -> str:
    """NFKC, repair mixed-script words, case-fold (ς -> σ), strip accents.

    The diaeresis of a Greek ι or υ is kept (ϊ, ϋ): it says the vowel is not part of a
    digraph (Ευβοϊκός is "Evvoikos", not "Evikos"), which the transliteration needs. Plain
    comparisons ignore it (`plain`), so Μαΐου still equals Μαιου.
    """
    text = unicodedata.normalize("NFKC", text)
    if _GREEK_LETTER_RE.search(text) and _LATIN_LETTER_RE.search(text):
        text = _LETTER_WORD_RE.sub(_repair_mixed_word, text)
    decomposed = unicodedata.normalize("NFD", text.casefold())
    stripped = _COMBINING_RE.sub(_keep_greek_diaeresis, decomposed)
    return unicodedata.normalize("NFC", stripped) if "\u0308" in stripped else stripped


def _keep_greek_diaeresis(match: re.Match[str]) -> str:
    before = match.string[match.start() - 1] if match.start() else ""
    return "\u0308" if "\u0308" in match.group(0) and before in "ιυ" else ""


def has_greek(text: str) -> bool:
    """Whether `text` has a Greek letter."""
    return _GREEK_LETTER_RE.search(text) is not None


def has_latin(text: str) -> bool:
    """Whether `text` has a Latin letter."""
    return _LATIN_LETTER_RE.search(text) is not None


_GREEK_VOWELS = {"α": "αά", "ε": "εέ", "η": "ηή", "ι": "ιίϊΐ", "ο": "οό", "υ": "υύϋΰ", "ω": "ωώ"}


def accent_tolerant(pattern: str) -> str:
    """A regex pattern in which every unaccented Greek vowel also matches its accented forms,
    so "απαντηση" finds "Απάντηση" without folding the text searched."""
    return "".join(f"[{_GREEK_VOWELS[c]}]" if c in _GREEK_VOWELS else c for c in pattern)


_PLAIN = str.maketrans("ϊϋ", "ιυ")


def plain(token: str) -> str:
    """A folded token without the diaeresis kept by `fold`."""
    return token.translate(_PLAIN)


@lru_cache(maxsize=65536)
def tokens(text: str) -> tuple[str, ...]:
    """The folded word and number tokens of `text`; punctuation and symbols separate them."""
    return tuple(_TOKEN_RE.findall(fold(text)))


@lru_cache(maxsize=65536)
def fold_text(text: str) -> str:
    """A canonical form for whole-answer comparison: folded tokens joined by single spaces."""
    return plain(" ".join(tokens(text)))


@lru_cache(maxsize=65536)
def script(token: str) -> Script:
    """Which alphabet a folded token is written in."""
    has_greek = _GREEK_LETTER_RE.search(token) is not None
    has_latin = re.search(r"[a-z]", token) is not None
    if has_greek and has_latin:
        return "mixed"
    if has_greek:
        return "greek"
    if has_latin:
        return "latin"
    return "number" if _NUMBER_TOKEN_RE.fullmatch(token) else "other"


# --- Transliteration skeleton -------------------------------------------------------------
#
# Greek and Greeklish are both mapped to a reduced Latin alphabet in which the sounds that
# Greeklish writers spell in several ways collapse: i/h/y and η ι υ ει οι -> i, o/w and ο ω
# -> o, ου/u -> u, μπ/mp/b -> b, ντ/nt/d -> d, γκ γγ gk ng -> g, αυ ευ -> av ev (af, au, ay,
# ef, eu, ey too), θ/th/8 -> th, φ/ph -> f, ψ -> ps, ξ/ks -> ks, χ/ch -> x, and doubled
# letters collapse. Greek spelling is unambiguous, so a Greek word has exactly one skeleton.
# Latin spelling is not: "x" is χ or ξ, "h" is η or χ, "b" is μπ or β, "th" is θ or τη.
# A Latin word therefore gets the small set of skeletons of all its readings, and two words
# match when their sets meet. Nothing here ever makes a vowel e stand for η: "Kyriake" is
# not accepted for Κυριακή, which keeps the skeleton precise.

_GREEK_DIGRAPHS = {
    # ISO 843 clusters that Greeklish writers spell by sound: άγχος "anchos", σφιγξ "sfinx".
    "γχ": "nx",
    "γξ": "nks",
    "ου": "u",
    "ει": "i",
    "οι": "i",
    "υι": "i",
    "αι": "e",
    "αυ": "av",
    "ευ": "ev",
    "ηυ": "iv",
}
_GREEK_LETTERS = dict(
    zip(
        "αβγδεζηθικλμνξοπρστυφχψωϊϋ",
        [
            "a",
            "v",
            "g",
            "d",
            "e",
            "z",
            "i",
            "th",
            "i",
            "k",
            "l",
            "m",
            "n",
            "ks",
            "o",
            "p",
            "r",
            "s",
            "t",
            "i",
            "f",
            "x",
            "ps",
            "o",
            "i",
            "i",
        ],
        strict=True,
    )
)
_GREEK_PIECE_RE = re.compile("|".join(_GREEK_DIGRAPHS) + "|.", re.S)

_LATIN_OPTIONS: dict[str, tuple[str, ...]] = {
    "th": ("th", "ti"),
    "ch": ("x",),
    "kh": ("x", "ki"),
    "ph": ("f",),
    "dh": ("d", "di"),
    "gh": ("g", "gi"),
    "ps": ("ps",),
    "ks": ("ks",),
    "ou": ("u",),
    "oy": ("u",),
    # A vowel pair is usually a digraph (ει, οι, αι) but can be two letters (Μπέη "Bei",
    # βοήθεια "voitheia", Ραφαήλ "Rafail"), so both readings are kept.
    "ei": ("i", "ei"),
    "oi": ("i", "oi"),
    "ui": ("i", "ui"),
    "ai": ("e", "ai"),
    "au": ("av",),
    "ay": ("av", "ag", "ai"),
    "eu": ("ev",),
    "ey": ("ev", "eg", "ei"),
    "x": ("x", "ks"),
    "h": ("i", "x"),
    "y": ("i", "g"),
    "u": ("u", "i"),
    "w": ("o",),
    "b": ("b", "v"),
    "c": ("k",),
    "q": ("k",),
    "j": ("tz",),
    # Digits used as letters in Greeklish: 8 for θ (its shape), 3 for ξ.
    "8": ("th",),
    "3": ("ks",),
}
_LATIN_PIECE_RE = re.compile(
    "|".join(sorted((k for k in _LATIN_OPTIONS if len(k) > 1), key=len, reverse=True)) + "|.",
    re.S,
)
_SCRIPT_RUN_RE = re.compile(f"[{_GREEK_RANGE}]+|[^{_GREEK_RANGE}]+")
_DOUBLE_RE = re.compile(r"(.)\1+")
_CLUSTERS = (("mp", "b"), ("nt", "d"), ("gk", "g"), ("ng", "g"), ("nx", "gx"), ("vf", "f"))
_VOWEL_F_RE = re.compile(r"(?<=[aei])f")
_MAX_READINGS = 64


def _greek_run(run: str) -> str:
    return "".join(
        _GREEK_DIGRAPHS.get(piece) or _GREEK_LETTERS.get(piece, piece)
        for piece in _GREEK_PIECE_RE.findall(run)
    )


def _latin_run(run: str) -> set[str]:
    readings = {""}
    for piece in _LATIN_PIECE_RE.findall(run):
        options = _LATIN_OPTIONS.get(piece, (piece,))
        # Past the cap, keep the most common reading only: long words are rarely ambiguous
        # in more than a couple of places, and the cap bounds the cost of a pathological one.
        if len(readings) * len(options) > _MAX_READINGS:
            options = options[:1]
        readings = {prefix + option for prefix in readings for option in options}
    return readings


def _reduce(raw: str) -> str:
    """Collapse the spellings that Greek and Greeklish share ambiguously into one form."""
    text = _DOUBLE_RE.sub(r"\1", raw)
    for cluster, sound in _CLUSTERS:
        text = text.replace(cluster, sound)
    text = _VOWEL_F_RE.sub("v", text)
    return _DOUBLE_RE.sub(r"\1", text)


@lru_cache(maxsize=65536)
def skeletons(token: str) -> frozenset[str]:
    """All transliteration skeletons of one folded token (one for Greek, a few for Latin)."""
    readings = {""}
    for run in _SCRIPT_RUN_RE.findall(token):
        if _GREEK_LETTER_RE.match(run):
            parts: set[str] = {_greek_run(run)}
        else:
            parts = _latin_run(run)
        readings = {prefix + part for prefix in readings for part in parts}
    return frozenset(_reduce(reading) for reading in readings)


def cross_script(first: str, second: str) -> bool:
    """Whether comparing two tokens needs transliteration (different or mixed alphabets).

    Greek against Greek and Latin against Latin are compared by folding only: the skeleton
    would forgive real spelling errors (σταφύλια / σταφιλια) and English near misses (bet /
    vet) that a person would mark wrong.
    """
    a, b = script(first), script(second)
    if "mixed" in (a, b):
        return a != "number" and b != "number"
    return {a, b} == {"greek", "latin"}


@lru_cache(maxsize=65536)
def skeleton_match(first: str, second: str) -> bool:
    """Whether two folded tokens of different alphabets spell the same Greek word."""
    return cross_script(first, second) and not skeletons(first).isdisjoint(skeletons(second))


# --- Numbers ------------------------------------------------------------------------------

_GROUP_SEPARATORS = r"(?:,|\{,\}|\\,|\\ |\\;|[ \u00a0\u2009\u202f])"
# Thousands are grouped only with commas or (thin, no-break, plain) spaces and groups of
# exactly three digits. "1.000" is not read as a thousand: in English it is one, and the
# Greek reading is too ambiguous to credit.
NUMBER_RE = re.compile(
    rf"""(?<![^\W\d_])(?<![\d.,])
    (?P<sign>[-−])?
    (?P<int>[1-9]\d{{0,2}}(?:{_GROUP_SEPARATORS}\d{{3}})+(?![\d])
        |[1-9]\d{{0,2}}(?:\.\d{{3}}){{2,}}(?![\d.])
        |\d+)
    (?:(?P<point>(?<!\.\d{{3}})\.\d+)|(?P<comma>,(?:(?<=(?<![\d.,])0,)\d+|(?!\d{{3}}(?!\d))\d+)))?
    """,
    re.X,
)
"""A number written with digits. Thousands groups use commas, spaces or (two or more) dots
("1.234.567"); a comma after a lone 0 is a decimal comma ("0,125")."""


_MAX_DIGITS = 1000
"""Longer digit runs are no answer anyone expects; they get a stand-in of their magnitude."""


def number_value(match: re.Match[str]) -> Fraction:
    """The exact value of a `NUMBER_RE` match."""
    return _to_fraction(match)


def _to_fraction(match: re.Match[str]) -> Fraction:
    digits = re.sub(r"\D", "", match.group("int"))
    if len(digits) > _MAX_DIGITS:
        # Python refuses to parse more than 4,300 digits; a power of ten of the same length
        # is just as unequal to any expected answer, and costs nothing to build.
        return Fraction(10 ** len(digits)) * (-1 if match.group("sign") else 1)
    fraction = match.group("point") or (
        "." + match.group("comma")[1:] if match.group("comma") else ""
    )
    value = Fraction(digits + fraction)
    return -value if match.group("sign") else value


def find_numbers(text: str) -> list[Fraction]:
    """Every number written with digits in `text`, in order, as exact fractions."""
    return [_to_fraction(m) for m in NUMBER_RE.finditer(text)]


@lru_cache(maxsize=65536)
def parse_number(text: str) -> Fraction | None:
    """The value of `text` if it is one bare number, perhaps with a currency or % sign.

    Words around the number make it something else ("12 Μαΐου" is a date, not 12).
    """
    found = list(NUMBER_RE.finditer(text))
    if len(found) != 1:
        return None
    rest = (text[: found[0].start()] + text[found[0].end() :]).strip()
    return _to_fraction(found[0]) if rest in ("", "$", "€", "£", "%", "°") else None


@lru_cache(maxsize=65536)
def token_value(token: str) -> Fraction | None:
    """The numeric value of a number token ("8,00" is 8), or None for times and words."""
    if ":" in token or not _NUMBER_TOKEN_RE.fullmatch(token):
        return None
    match = NUMBER_RE.fullmatch(token)
    return _to_fraction(match) if match else None


_GREEK_NUMBER_WORDS: dict[str, int] = {
    "μηδεν": 0,
    "ενα": 1,
    "ενασ": 1,
    "ενοσ": 1,
    "μια": 1,
    "μιασ": 1,
    "δυο": 2,
    "τρια": 3,
    "τρεισ": 3,
    "τεσσερα": 4,
    "τεσσερισ": 4,
    "τεσσερεισ": 4,
    "πεντε": 5,
    "εξι": 6,
    "επτα": 7,
    "εφτα": 7,
    "οκτω": 8,
    "οχτω": 8,
    "εννεα": 9,
    "εννια": 9,
    "δεκα": 10,
    "εντεκα": 11,
    "ενδεκα": 11,
    "δωδεκα": 12,
    "δεκατρια": 13,
    "δεκατρεισ": 13,
    "δεκατεσσερα": 14,
    "δεκατεσσερισ": 14,
    "δεκαπεντε": 15,
    "δεκαεξι": 16,
    "δεκαξι": 16,
    "δεκαεπτα": 17,
    "δεκαεφτα": 17,
    "δεκαοκτω": 18,
    "δεκαοχτω": 18,
    "δεκαεννεα": 19,
    "δεκαεννια": 19,
    "εικοσι": 20,
    "τριαντα": 30,
    "σαραντα": 40,
    "πενηντα": 50,
    "εξηντα": 60,
    "εβδομηντα": 70,
    "ογδοντα": 80,
    "ενενηντα": 90,
    "εκατο": 100,
    "εκατον": 100,
    "χιλια": 1000,
    "χιλιεσ": 1000,
} | {
    # Hundreds take the gender of what they count: διακόσια, διακόσιες, διακόσιοι, διακοσίων.
    f"{stem}{ending}": value
    for value, stems in (
        (200, ("διακοσ",)),
        (300, ("τριακοσ",)),
        (400, ("τετρακοσ",)),
        (500, ("πεντακοσ",)),
        (600, ("εξακοσ",)),
        (700, ("επτακοσ", "εφτακοσ")),
        (800, ("οκτακοσ", "οχτακοσ")),
        (900, ("εννιακοσ", "εννεακοσ")),
    )
    for stem in stems
    for ending in ("ια", "ιεσ", "ιοι", "ιων", "ιουσ")
}
_ENGLISH_UNITS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen "
    "fourteen fifteen sixteen seventeen eighteen nineteen twenty"
)
_ENGLISH_NUMBER_WORDS: dict[str, int] = {
    word: value for value, word in enumerate(_ENGLISH_UNITS.split())
} | {
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
    "hundred": 100,
}
# Greeklish number words ("dekapente", "triada okto") are found through the skeleton, so
# every spelling the skeleton accepts for a Greek word is accepted for its number too.
_NUMBER_SKELETONS: dict[str, int] = {
    next(iter(skeletons(word))): value for word, value in _GREEK_NUMBER_WORDS.items()
}
_TENS = frozenset({20, 30, 40, 50, 60, 70, 80, 90})
# Words that multiply what comes before them ("three hundred", "δύο χιλιάδες").
_MULTIPLIERS = {"hundred": 100, "thousand": 1000, "χιλιαδεσ": 1000, "xiliades": 1000}


@lru_cache(maxsize=65536)
def word_value(token: str) -> int | None:
    """The value of a Greek, English or Greeklish number word, or None."""
    if token in _GREEK_NUMBER_WORDS:
        return _GREEK_NUMBER_WORDS[token]
    if token in _ENGLISH_NUMBER_WORDS:
        return _ENGLISH_NUMBER_WORDS[token]
    if script(token) in ("latin", "mixed"):
        for skeleton in skeletons(token):
            if skeleton in _NUMBER_SKELETONS:
                return _NUMBER_SKELETONS[skeleton]
    return None


def number_words(words: tuple[str, ...]) -> list[int]:
    """Numbers spelled out in a token sequence, composed as they are said.

    "τριάντα οχτώ" is 38, "τριακόσια είκοσι" 320, "δύο χιλιάδες πεντακόσια" 2500, "three
    hundred and twenty" 320; two numbers that cannot compose ("δύο τρία") stay two.
    """
    values: list[int] = []
    total: int | None = None  # the number being read, thousands included
    group = 0  # its part below one thousand
    for index, word in enumerate(words):
        multiplier = _MULTIPLIERS.get(word)
        if multiplier is not None and (total is not None or multiplier == 1000):
            total, group = _multiply(total, group, multiplier)
            continue
        value = word_value(word)
        if value is None and word in ("and", "και") and total is not None and group >= 100:
            following = words[index + 1] if index + 1 < len(words) else ""
            if (nxt := word_value(following)) is not None and _composes(group, nxt):
                continue  # "three hundred and twenty"
        if total is not None and value is not None and _continues(total, group, value):
            total, group = total + value, group + value
            continue
        if total is not None:
            values.append(total)
        # "χίλια" opens a number whose part below a thousand is still to come.
        total, group = (value, value % 1000) if value is not None else (None, 0)
    if total is not None:
        values.append(total)
    return values


def _multiply(total: int | None, group: int, multiplier: int) -> tuple[int, int]:
    """Apply "hundred" or "thousand" to the number read so far."""
    if total is None:
        return multiplier, 0 if multiplier == 1000 else multiplier
    if multiplier == 100:
        thousands = total - group
        group = max(group, 1) * 100
        return thousands + group, group
    return (total - group) + max(group, 1) * 1000, 0


def _continues(total: int, group: int, value: int) -> bool:
    """Whether `value` continues the number read so far ("χίλια" + "διακόσια" + "είκοσι")."""
    if total >= 1000 and group == 0:
        return value < 1000
    return _composes(group, value)


def _composes(head: int, tail: int) -> bool:
    """Whether `tail` continues the number `head` ("είκοσι" + "ένα", "εκατό" + "είκοσι")."""
    if head % 100 == 0 and head >= 100:
        return 0 < tail < 100
    return head % 10 == 0 and (head % 100) in _TENS and 0 < tail < 10


# --- Months -------------------------------------------------------------------------------

_GREEK_MONTHS = (
    "ιανουαριοσ ιανουαριου ιανουαριο γεναρησ γεναρη",
    "φεβρουαριοσ φεβρουαριου φεβρουαριο φλεβαρησ φλεβαρη",
    "μαρτιοσ μαρτιου μαρτιο μαρτησ μαρτη",
    "απριλιοσ απριλιου απριλιο απριλησ απριλη",
    "μαιοσ μαιου μαιο μαησ μαη μαϊου",
    "ιουνιοσ ιουνιου ιουνιο ιουνησ ιουνη",
    "ιουλιοσ ιουλιου ιουλιο ιουλησ ιουλη",
    "αυγουστοσ αυγουστου αυγουστο",
    "σεπτεμβριοσ σεπτεμβριου σεπτεμβριο σεπτεμβρησ σεπτεμβρη",
    "οκτωβριοσ οκτωβριου οκτωβριο οκτωβρησ οκτωβρη",
    "νοεμβριοσ νοεμβριου νοεμβριο νοεμβρησ νοεμβρη",
    "δεκεμβριοσ δεκεμβριου δεκεμβριο δεκεμβρησ δεκεμβρη",
)
_ENGLISH_MONTHS = (
    "january jan",
    "february feb",
    "march mar",
    "april apr",
    "may",
    "june jun",
    "july jul",
    "august aug",
    "september sep sept",
    "october oct",
    "november nov",
    "december dec",
)
_MONTH_WORDS: dict[str, int] = {
    word: number
    for forms_by_month in (_GREEK_MONTHS, _ENGLISH_MONTHS)
    for number, forms in enumerate(forms_by_month, start=1)
    for word in forms.split()
}
_MONTH_SKELETONS: dict[str, int] = {
    next(iter(skeletons(word))): number
    for number, forms in enumerate(_GREEK_MONTHS, start=1)
    for word in forms.split()
}


@lru_cache(maxsize=65536)
def month_value(token: str) -> int | None:
    """The month (1-12) a Greek, English or Greeklish month name stands for, or None."""
    if token in _MONTH_WORDS:
        return _MONTH_WORDS[token]
    if script(token) in ("latin", "mixed"):
        for skeleton in skeletons(token):
            if skeleton in _MONTH_SKELETONS:
                return _MONTH_SKELETONS[skeleton]
    return None
