"""The comparison rules a scorer chains: each answers one question about answer and text.

All comparisons are on whole tokens (word boundaries), never on substrings, so "ναι" is
not found inside "είναι", "green" not inside "evergreen" and 15 not inside 150. Fuzzy
similarity is deliberately absent: every rule here either finds the expected answer,
spelled in an accepted way, or does not.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from difflib import SequenceMatcher
from fractions import Fraction
from functools import lru_cache
from typing import Any

from llm_eval.scoring.normalize import (
    fold,
    fold_text,
    has_greek,
    month_value,
    number_words,
    parse_number,
    plain,
    skeleton_match,
    token_value,
    tokens,
)
from llm_eval.scoring.passage import passage_text

Date = tuple[int, int, int | None]

# Articles, prepositions, pronouns and filler that carry no answer, in Greek (folded: no
# accents, σ for ς), English and Greeklish. Coverage ignores them so that "η Μαρίνα",
# "Marina" and "the answer is Marina" all count as naming Marina.
_STOPWORD_LIST = """
    ο η το οι τα του τησ των τον την τη τουσ τισ στο στη στην στον στα στουσ στισ στου
    στησ σε σ με για απο και κι κ ειναι ηταν ειμαι θα να που ποιοσ ποια ποιο ενα ενασ μια
    μιασ ενοσ ενα δεν μη μην οτι πωσ ωσ αρα λοιπον οποτε απαντηση τελικη αυτο αυτη αυτοσ
    αυτα αυτοι εκει εδω εχει εχω μου σου του μασ σασ τουσ
    the a an of in on at to is it its was are be been answer final that this these those
    and by for with as so i my me we he she they his her their which what who whom will
    would can could should do does did there here
    o i h to oi ta tou tis twn ton tin thn ti sto sti stin sthn ston se me gia apo kai ki
    einai itan tha na pou ena enas mia den oti apantisi apanthsh
    """
STOPWORDS = frozenset(_STOPWORD_LIST.split())

_DISJUNCTION_RE = re.compile(r"(?<![^\W_])(?:ή|ἤ|or|either|είτε|ειτε|eite)(?![^\W_])")
_SLASH_BETWEEN_WORDS_RE = re.compile(r"(?<=[^\W\d_])\s*/\s*(?=[^\W\d_])")
# Commas inside numbers ("3,2") do not separate list items.
_LIST_SEPARATOR_RE = re.compile(r",(?!\d)|(?<!\d),|;")
_NUMERIC_DATE_RE = re.compile(
    r"(?<![\d.,/])(\d{1,2})\s*[/.\-]\s*(\d{1,2})(?:\s*[/.\-]\s*(\d{4}|\d{2}))?(?![\d/])"
)
_ORDINAL_DAY_RE = re.compile(r"(\d{1,2})(?:η|ησ|ο|th|st|nd|rd|i|h)?")
_YEAR_RE = re.compile(r"(?:19|20)\d{2}")

YES_WORDS = frozenset(
    {"ναι", "yes", "yeah", "yep", "nai", "ne", "true", "σωστο", "σωστα", "correct"}
)
NO_WORDS = frozenset({"οχι", "no", "nope", "oxi", "ohi", "ochi", "false", "λαθοσ", "incorrect"})


@lru_cache(maxsize=65536)
def content_tokens(text: str) -> tuple[str, ...]:
    """The tokens of `text` that can carry an answer (stopwords removed)."""
    return tuple(token for token in tokens(text) if token not in STOPWORDS)


def answer_content(answer: str) -> tuple[str, ...]:
    """An answer's content tokens, or all its tokens if it is made of stopwords only."""
    return content_tokens(answer) or tokens(answer)


def exact_match(extracted: str, answer: str) -> bool:
    """The extracted answer equals the expected one after case, accent and punctuation folding."""
    return bool(fold_text(answer)) and fold_text(extracted) == fold_text(answer)


REGEX_TIMEOUT_S = 0.05
"""Time budget of one `answer_regex` search: a pathological pattern must not stall a run."""


@lru_cache(maxsize=1024)
def compile_answer_regex(pattern: str) -> Any:
    """Compile a task's `answer_regex` once, case-insensitive, with the `regex` engine.

    `regex` accepts the `re` syntax and, unlike `re`, can stop a search after a timeout.
    """
    import regex

    try:
        return regex.compile(pattern, regex.IGNORECASE | regex.V0)
    except regex.error as exc:
        raise ValueError(f"answer_regex {pattern!r} does not compile: {exc}") from exc


class RegexTimeout(Exception):
    """An `answer_regex` search ran past `REGEX_TIMEOUT_S`."""


def regex_candidates(extracted: str, raw: str | None) -> list[str]:
    """The strings an `answer_regex` is tried on: the answer as written, folded, bare, raw."""
    bare = extracted.strip(" €$£%")
    candidates = [extracted, unicodedata.normalize("NFC", fold(extracted)), bare, _unled(bare)]
    if raw is not None:
        candidates.append(raw.strip())
    return list(dict.fromkeys(candidates))


def _unled(text: str) -> str:
    """`text` without its leading articles and prepositions ("Τον Ιούλιο" -> "Ιούλιο")."""
    words = text.split()
    while len(words) > 1 and fold_text(words[0]) in STOPWORDS:
        words.pop(0)
    return " ".join(words)


def regex_match(pattern: str, candidates: Iterable[str]) -> str | None:
    """The first candidate that `pattern` matches anywhere in, or None."""
    compiled = compile_answer_regex(pattern)
    for text in candidates:
        try:
            if compiled.search(text, timeout=REGEX_TIMEOUT_S):
                return text
        except TimeoutError:
            raise RegexTimeout(f"answer_regex {pattern!r} took over {REGEX_TIMEOUT_S} s") from None
    return None


def tokens_equal(first: str, second: str, *, transliterate: bool) -> bool:
    """Two folded tokens name the same thing: same text, same number, or same skeleton."""
    if first == second or plain(first) == plain(second):
        return True
    value = token_value(first)
    if value is not None and value == token_value(second):
        return True
    return transliterate and skeleton_match(first, second)


def contains_sequence(
    needle: Sequence[str], haystack: Sequence[str], *, transliterate: bool
) -> bool:
    """`needle` occurs in `haystack` as consecutive whole tokens."""
    width = len(needle)
    if width == 0 or width > len(haystack):
        return False
    last_start = len(haystack) - width + 1
    first = needle[0]
    if not transliterate and token_value(first) is None:
        # Plain text can only be equal as text: skip straight to the candidate positions.
        first = plain(first)
        starts: Iterable[int] = (i for i in range(last_start) if plain(haystack[i]) == first)
    else:
        starts = range(last_start)
    return any(_equal_at(needle, haystack, i, transliterate) for i in starts)


def _equal_at(
    needle: Sequence[str], haystack: Sequence[str], start: int, transliterate: bool
) -> bool:
    for offset, word in enumerate(needle):
        if not tokens_equal(word, haystack[start + offset], transliterate=transliterate):
            return False
    return True


def covers(needed: Sequence[str], haystack: Sequence[str], *, transliterate: bool = True) -> bool:
    """Every needed token occurs somewhere in `haystack`, in any order."""
    return bool(needed) and all(
        any(tokens_equal(n, h, transliterate=transliterate) for h in haystack) for n in needed
    )


def _mark_disjunctions(segment: str) -> tuple[str, ...]:
    """Tokens of `segment` with every disjunction ("ή", "είτε", "either", "/") read as "or".

    "ή" (or) and "η" (the article) differ only by the accent, so this runs before folding.
    """
    lowered = unicodedata.normalize("NFKC", segment).casefold()
    lowered = _SLASH_BETWEEN_WORDS_RE.sub(" or ", _DISJUNCTION_RE.sub(" or ", lowered))
    return tokens(lowered)


def _neighbours(
    words: Sequence[str], index: int, keep: Callable[[str], bool] | None = None
) -> list[str]:
    """The nearest content word on each side of position `index`; a stopword counts when
    `keep` says it is an answer word ("Mia" is also the Greeklish «μία»)."""

    def content(word: str) -> bool:
        return word not in STOPWORDS or (keep is not None and keep(word))

    left = next((w for w in reversed(words[:index]) if content(w)), None)
    right = next((w for w in words[index + 1 :] if content(w)), None)
    return [w for w in (left, right) if w is not None and w != "or"]


def is_hedged(
    segment: str, *, near: Callable[[str], bool] | None = None, lists: bool = True
) -> bool:
    """The segment offers the answer as one of several alternatives.

    Hedging is a disjunction ("ή", "or", "either", "είτε", a slash between words) joined to
    the answer: its nearest content word on either side satisfies `near` (any disjunction
    counts when `near` is None). "Μαρία ή Μαρίνα" hedges; "η Μαρίνα, γιατί η Μαρία δουλεύει
    ή έχει εφημερία" commits to Marina. With `lists`, a bare list of single-word candidates
    ("Μαρία, Μαρίνα") hedges too.
    """
    words = _mark_disjunctions(segment)
    for index, word in enumerate(words):
        if word == "or" and (near is None or any(map(near, _neighbours(words, index, near)))):
            return True
    return lists and _is_bare_list(segment)


def _is_bare_list(segment: str) -> bool:
    # An item a negation rejects ("δεν είναι Τετάρτη, είναι Τρίτη") is not a candidate.
    items = [
        item for item in _LIST_SEPARATOR_RE.split(segment)
        if (item_words := tokens(item)) and not NEGATORS.intersection(item_words)
    ]  # fmt: skip
    if len(items) < 2:
        return False
    words = [content_tokens(item) for item in items]
    return all(len(w) == 1 for w in words) and len({w[0] for w in words}) == len(words)


def says_both(text: str) -> bool:
    """ "Ναι και όχι", "yes and no": both polarities joined, which answers neither."""
    words = [w for w in tokens(text) if w not in ("and", "και", "κι", "kai")]
    return any(
        a is not None and b is not None and a != b
        for a, b in zip(map(polarity, words), map(polarity, words[1:]), strict=False)
    )


def polarity(token: str) -> bool | None:
    """True for a yes word, False for a no word, None otherwise."""
    if token in YES_WORDS:
        return True
    if token in NO_WORDS:
        return False
    return None


# A negator flips the yes/no word it governs: "δεν είναι σωστό" answers no, not yes.
NEGATORS = frozenset({"δεν", "δε", "μη", "μην", "den", "not", "isnt", "never", "ουτε", "oute"})


def first_polarity(text: str) -> bool | None:
    """The polarity of the first yes/no word in `text` (the one a reader takes as the reply).

    A negator before it in the same clause ("δεν είναι σωστό", "not true") flips it; one in
    an earlier clause does not ("Το κείμενο δεν το λέει, οπότε όχι" says no).
    """
    found = clause_polarities(text)
    return found[0] if found else None


_POLAR_CLAUSE_RE = re.compile(
    r"[,;·.]|(?<![^\W_])(?:οπότε|οποτε|άρα|αρα|so|therefore|αλλά|αλλα|but)(?![^\W_])", re.I
)


def clause_polarities(text: str) -> list[bool]:
    """The polarity of the first yes/no word of each clause of `text` that has one."""
    found: list[bool] = []
    for clause in _POLAR_CLAUSE_RE.split(text):
        negated = False
        for token in tokens(clause):
            if token in NEGATORS:
                negated = not negated
                continue
            value = polarity(token)
            if value is not None:
                found.append(value != negated)
                break
    return found


_ENGLISH_POLAR = frozenset(
    {"yes", "yeah", "yep", "no", "nope", "true", "false", "correct", "incorrect"}
)


def english_polar_word(text: str) -> bool:
    """Whether the first yes/no word of `text` is English ("Yes", "No"), not Greek."""
    word = next((t for t in tokens(text) if polarity(t) is not None), None)
    return word in _ENGLISH_POLAR


def one_edit_apart(first: str, second: str) -> bool:
    """One letter inserted, dropped, replaced, or two neighbours swapped (Damerau)."""
    if first == second or abs(len(first) - len(second)) > 1:
        return False
    if len(first) == len(second):
        diff = [i for i, (a, b) in enumerate(zip(first, second, strict=True)) if a != b]
        if len(diff) == 1:
            return True
        i = diff[0]
        return (
            len(diff) == 2
            and diff[1] == i + 1
            and first[i] == second[i + 1]
            and first[i + 1] == second[i]
        )
    shorter, longer = sorted((first, second), key=len)
    i = next(
        (i for i, (a, b) in enumerate(zip(shorter, longer, strict=False)) if a != b), len(shorter)
    )
    return shorter[i:] == longer[i + 1 :]


def answer_number(answer: str) -> Fraction | None:
    """The expected answer as a number, whether written in digits or in words."""
    value = parse_number(answer)
    if value is not None:
        return value
    spelled = number_words(tokens(answer))
    words = [t for t in tokens(answer) if t not in STOPWORDS]
    return Fraction(spelled[0]) if len(spelled) == 1 and words else None


_GREEK_THOUSANDS = re.compile(r"^[1-9]\d{0,2}\.\d{3}$")


def numbers_in(text: str, greek: bool | None = None) -> list[Fraction]:
    """Numbers in `text` written with digits or spelled in Greek, English or Greeklish.

    A number that a rejecting word governs ("18 Ιουνίου, όχι 8") is not offered, so not found.
    """
    kept = offered_tokens(text)
    found = [value for token in kept if (value := token_value(token)) is not None]
    if has_greek(text) if greek is None else greek:
        # Greek writes thousands with a dot: in a Greek text "1.200" may be 1200.
        found += [Fraction(int(t.replace(".", ""))) for t in kept if _GREEK_THOUSANDS.match(t)]
    return found + [Fraction(value) for value in number_words(kept)]


def dates_in(text: str) -> list[Date]:
    """Day-month dates in `text`: "12/5", "12-05-2024", "12 Μαΐου", "12η Maiou", "May 12"."""
    found: list[Date] = []
    for match in _NUMERIC_DATE_RE.finditer(text):
        year = int(match.group(3)) if match.group(3) else None
        found.append((int(match.group(1)), int(match.group(2)), year))
    words = tokens(text)
    for index, word in enumerate(words):
        month = month_value(word)
        if month is not None:
            found.extend(_day_around(words, index, month))
    return [date for date in found if 1 <= date[0] <= 31 and 1 <= date[1] <= 12]


def _day_around(words: Sequence[str], index: int, month: int) -> list[Date]:
    """The day next to a month word (before it, or after it as in "May 12"), with a year."""
    after = words[index + 1] if index + 1 < len(words) else ""
    year = int(after) if _YEAR_RE.fullmatch(after) else None
    for neighbour in (words[index - 1] if index else "", after):
        day = _ORDINAL_DAY_RE.fullmatch(neighbour)
        if day and not _YEAR_RE.fullmatch(neighbour):
            return [(int(day.group(1)), month, year)]
    return []


def answer_date(answer: str) -> Date | None:
    """The expected answer as a date, if it is exactly one date."""
    found = dates_in(answer)
    return found[0] if len(set(found)) == 1 else None


def same_date(expected: Date, found: Date) -> bool:
    """Same day and month; years must agree only when both are given."""
    years_agree = expected[2] is None or found[2] is None or expected[2] % 100 == found[2] % 100
    return expected[:2] == found[:2] and years_agree


# --- Competing candidates -----------------------------------------------------------------

# Words that reject what follows them ("όχι 8", "not Maria", "αντί για την Τρίτη"): a decoy
# named right after one of them is set aside, not offered.
REJECTORS = frozenset({"οχι", "oxi", "ochi", "not", "no", "αντι", "anti", "instead", "δεν", "den"})


def occurrences(
    needle: Sequence[str], haystack: Sequence[str], *, transliterate: bool
) -> list[int]:
    """Every start position of `needle` in `haystack` as consecutive whole tokens."""
    width = len(needle)
    if width == 0 or width > len(haystack):
        return []
    return [
        start
        for start in range(len(haystack) - width + 1)
        if _equal_at(needle, haystack, start, transliterate)
    ]


def competing_candidate(
    text: str,
    answers: Sequence[str],
    distractors: Sequence[str],
    *,
    transliterate: bool = True,
) -> str | None:
    """A distractor that `text` offers alongside the answer, or None.

    An occurrence inside an occurrence of an accepted answer ("Σμύρνη" inside "Νέα Σμύρνη")
    does not compete, nor does one that a rejecting word governs ("18 Ιουνίου, όχι 8"), nor
    does working that a conclusion settles: after the last "=", "άρα", "so", ... the text
    names the answer and no decoy ("18:20 + 40' + 10' = 19:10").
    """
    conclusion = conclusion_of(text)
    if (
        conclusion is not None
        and conclusion != text
        and _names_any(conclusion, answers, transliterate)
        and competing_candidate(conclusion, answers, distractors, transliterate=transliterate)
        is None
    ):
        return None
    words = tokens(text)
    covered: set[int] = set()
    for answer in answers:
        needle = tokens(answer)
        for start in occurrences(needle, words, transliterate=transliterate):
            covered.update(range(start, start + len(needle)))
    for distractor in distractors:
        needle = tokens(distractor)
        for start in occurrences(needle, words, transliterate=transliterate):
            span = set(range(start, start + len(needle)))
            if span <= covered or _rejected(words, start):
                continue
            return distractor
    return None


_CONCLUSION_RE = re.compile(
    r"(?:=|→|⇒|:(?=\s)|\b(?:άρα|αρα|οπότε|οποτε|επομένως|επομενως|συνεπώς|συνεπως|δηλαδή|δηλαδη"
    r"|ara|opote|so|therefore|thus|hence)\b)",
    re.IGNORECASE,
)


def conclusion_of(text: str) -> str | None:
    """What follows the last conclusion marker in `text`, or None if it has none."""
    ends = [match.end() for match in _CONCLUSION_RE.finditer(text)]
    return text[ends[-1] :] if ends else None


def _names_any(text: str, answers: Sequence[str], transliterate: bool) -> bool:
    words = tokens(text)
    return any(
        contains_sequence(tokens(answer), words, transliterate=transliterate) for answer in answers
    )


VERB_NEGATIONS = frozenset({"δεν", "den", "not"})
"""Rejecting words that negate a verb: in the reply to a negative question («Τι δεν
επιτρέπεται;» → «Δεν επιτρέπεται το κινητό») they restate the question, rejecting nothing."""


def _rejected(words: Sequence[str], start: int, *, negative_question: bool = False) -> bool:
    before = [w for w in words[max(0, start - 3) : start] if w not in _REJECTOR_FILLER]
    rejectors = REJECTORS - VERB_NEGATIONS if negative_question else REJECTORS
    return any(plain(w) in rejectors for w in before[-2:])


_REJECTOR_FILLER = frozenset({"για", "gia", "ο", "η", "την", "τη", "το", "τον", "τα", "the", "a"})


def passage_words(question: str) -> frozenset[str]:
    """The distinct content words of the passage a question quotes."""
    return frozenset(plain(t) for t in content_tokens(passage_text(question)))


def echo_share(response: str, question: str) -> float:
    """The share of the passage's words that the response copies in runs of three or more.

    Copying keeps the passage's order; an answer in the model's own words ("το εργαστήριο θα
    το αναλάβει ο κ. Τσακίρης") reuses its words but not its runs.
    """
    passage = [plain(t) for t in tokens(passage_text(question))]
    if not passage:
        return 0.0
    said = [plain(t) for t in tokens(response)]
    if len(said) < len(passage) // 2:
        return 0.0  # too short to hold most of the passage: skip the alignment
    blocks = SequenceMatcher(None, passage, said, autojunk=False).get_matching_blocks()
    return sum(block.size for block in blocks if block.size >= 3) / len(passage)


@lru_cache(maxsize=65536)
def offered_tokens(text: str) -> tuple[str, ...]:
    """The tokens of `text` except those a rejecting word governs ("όχι 8" drops 8)."""
    words = tokens(text)
    return tuple(word for index, word in enumerate(words) if not _rejected(words, index))


def offers(
    needle: Sequence[str], text: str, *, transliterate: bool, negative_question: bool = False
) -> bool:
    """`text` names `needle` as whole words at least once without rejecting it ("όχι 8")."""
    words = tokens(text)
    return any(
        not _rejected(words, start, negative_question=negative_question)
        for start in occurrences(needle, words, transliterate=transliterate)
    )
