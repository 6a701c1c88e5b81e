"""Cues that change which answer a reply commits to, or show it commits to none.

- A correction: «Πάτρα, όχι, τελικά Βόλο», "46, wait, actually 48", «Πάτρα — όχι, Βόλο»,
  "46... no, 48": what follows the last explicit correction cue of the closing line is the
  answer.
- Several answers: two closing answer lines («Απάντηση: Πάτρα» / «Απάντηση: Βόλος») or two
  bold lines with different contents commit to none.
- A range or a tolerance: "960–1000", "between 960 and 1000", "360 ± 10" state no one value.
- A condition: «Βόλο, αλλά αν μετράς και τη δουλειά, Πάτρα» offers a second answer under a
  condition; «Αν …, Πάτρα· αν …, Βόλο» gives one answer per condition and commits to none.
- A reason after a number: "65 (since 58 + 65 = 123)" states 65; the bracket is its reason.
"""

from __future__ import annotations

import re
from functools import lru_cache

from llm_eval.scoring.normalize import accent_tolerant as _accents
from llm_eval.scoring.normalize import fold_text


def accent_tolerant(pattern: str) -> str:
    """`pattern` with accented vowels and a final sigma allowed for its Greek letters."""
    return _accents(pattern).replace("σ", "[σς]")


_CORRECTION_RE = re.compile(
    "|".join(
        (
            accent_tolerant(r"οχι,?\s*(?:περιμενε,?\s*)?τελικα,?"),
            accent_tolerant(r"οχι,?\s*περιμενε,?"),
            accent_tolerant(r"(?:συγγνωμη,?\s*)?διορθωνω\s*[:,]?"),
            accent_tolerant(r"διορθωση\s*:"),
            # «α όχι», «όχι, στάσου», «στάσου», «Τελικά:» take back what came before them.
            accent_tolerant(r"(?<![^\W_])α,?\s+οχι,?(?:\s*τελικα,?)?"),
            accent_tolerant(r"(?<![^\W_])(?:οχι,?\s*)?στασου(?![^\W_])[,.!…]*"),
            # «Τελικά:» opening a clause, not a verb's adverb («δεν ισχύει τελικά: …»).
            r"(?:^|(?<=[.!…,;—–-])\s*)" + accent_tolerant(r"τελικα\s*:"),
            r"\b(?:wait|hold on),?\s*(?:no,?\s*)?actually,?(?:\.\.\.|…)?",
            r"\bno,?\s*wait,?",
            r"\bcorrection\s*:",
            r"\bscratch that\b[.,]?",
            # A bare "wait" last: "wait, actually" and "no, wait" above take their whole cue.
            r"\bwait\b[,.!…]*(?:\s*no\b,?)?",
        )
    ),
    re.I,
)
_TAIL_WORDS = 30


def _last_line(text: str) -> str:
    """The last line of `text` with anything but spaces on it."""
    stripped = text.rstrip()
    return stripped[stripped.rfind("\n") + 1 :]


"""A correction's tail longer than this is working, not a corrected answer."""


_BROKEN_NO_RE = re.compile(
    r"(?:[—–]|\s-\s|\.\.\.|…|[;?.;]\s)\s*(?:" + accent_tolerant("οχι") + r"|no|nope)\s*[,!]",
    re.I,
)
"""A «όχι,» or "no," after a dash or an ellipsis («Ο Μίλτος — όχι, ο Κοσμάς», "46... no,
48", «14/05; Όχι, …»): the reply breaks off or questions its answer to take it back. After a
comma alone it is not a cue («Ο Κοσμάς, όχι ο Μίλτος» rejects the decoy), nor for a yes/no
key, whose «όχι» is the answer itself."""
_NEGATED_TAIL_RE = re.compile(
    r"^\W*(?:" + accent_tolerant("δεν|δε|μην|ουτε") + r"|not|isn'?t|it'?s not|it is not)\b",
    re.I,
)


def correction_tail(text: str, *, broken_no: bool = True) -> str | None:
    """The answer after the last explicit correction cue of the reply's closing line, or None.

    Only the closing line counts: a "wait, actually" inside earlier working is part of the
    working, and the reply's conclusion already says what it settled on. `broken_no=False`
    leaves out «— όχι,» / "... no," (for a yes/no key).
    """
    last = _last_line(text)
    cues = [cue.end() for cue in _CORRECTION_RE.finditer(last)]
    if broken_no:
        # «Ο Κοσμάς… όχι, δεν είναι ο Μίλτος» goes on denying: no corrected answer follows.
        cues += [
            cue.end()
            for cue in _BROKEN_NO_RE.finditer(last)
            if not _NEGATED_TAIL_RE.match(last[cue.end() :])
        ]
    if not cues:
        return None
    tail = last[max(cues) :]
    # «α όχι, τα μαύρα τελείωσαν, τελικά λευκά»: a later «τελικά» settles the correction.
    settled = list(_SETTLE_RE.finditer(tail))
    if settled:
        tail = tail[settled[-1].end() :]
    tail = tail.strip(" .…—–-:")
    if not tail or len(tail.split()) > _TAIL_WORDS:
        return None
    return tail


_SETTLE_RE = re.compile(accent_tolerant(r"(?<![^\W_])τελικα(?![^\W_]),?") + r"|\bfinally\b,?", re.I)


def unsettled_correction(text: str, answer: str | None) -> bool:
    """Whether an explicit correction cue stands on the committed answer's line or after it,
    though no short corrected answer follows it (class `self_correction`): the reply takes
    its answer back without clearly giving another."""
    if not answer:
        return False
    at = text.rfind(answer)
    if at < 0:
        return False
    return _CORRECTION_RE.search(text, text.rfind("\n", 0, at) + 1) is not None


_WEAK_CORRECTION_RE = re.compile(
    accent_tolerant(r"(?<![^\W_])(?:η μαλλον|η καλυτερα|εννοω)(?![^\W_]),?")
    + r"|\bor rather\b,?|\bI mean\b,?",
    re.I,
)
_DOUBT_RE = re.compile(
    accent_tolerant(r"δεν ειμαι σιγουρ|δεν ξερω") + r"|not sure|\?|;|\u037e", re.I
)


def weak_correction_tail(text: str) -> str | None:
    """What follows "ή μάλλον" / "or rather" on the closing line: a correction or a second
    candidate, which the rules cannot tell apart. None when the line doubts it ("?")."""
    last = _last_line(text)
    cues = list(_WEAK_CORRECTION_RE.finditer(last))
    if not cues:
        return None
    tail = last[cues[-1].end() :].strip(" .…—–-:")
    if not tail or len(tail.split()) > _TAIL_WORDS or _DOUBT_RE.search(tail):
        return None
    if not _HAS_WORD_RE.search(last[: cues[0].start()]):
        return None  # nothing before the cue for it to correct ("I mean, Βόλος")
    return tail


_HAS_WORD_RE = re.compile(r"[^\W_]")
_MARKER_LINE_RE = re.compile(
    rf"^\W*(?:(?:final\s+)?answer|(?:{accent_tolerant('τελικη')}\s+)?{accent_tolerant('απαντηση')})"
    r"(?:\s*\([^)]{0,20}\))?\s*[*_]*\s*[:：]\s*[*_]*\s*(\S.*)$",
    re.I,
)
_BOLD_LINE_RE = re.compile(r"^\s*(?:[-*•]\s+|\d+[.)]\s+)?\*\*([^*]+)\*\*\s*[.!]?\s*$")
_HEADING_RE = re.compile(
    rf"^\W*(?:(?:final\s+)?answer|(?:{accent_tolerant('τελικη')}\s+)?"
    rf"{accent_tolerant('απαντηση')})\W*$",
    re.I,
)
"""A line that only names the answer to come («**Απάντηση**», "## Final answer")."""
_FIRST_NUMBER_RE = re.compile(r"-?\d+(?:[.,]\d+)?")


def _answer_of(line: str) -> str | None:
    """The answer a closing answer line gives, folded ("**Απάντηση: 48 m**" gives "48")."""
    match = _MARKER_LINE_RE.match(line) or _BOLD_LINE_RE.match(line)
    if match is None:
        return None
    content = match.group(1).strip(" *_.")
    inner = _MARKER_LINE_RE.match(content)
    if inner is not None:
        content = inner.group(1).strip(" *_.")
    number = _FIRST_NUMBER_RE.search(content)
    return number.group(0) if number else fold_text(content)


def several_answers(text: str) -> tuple[str, ...]:
    """The different answers of the reply's closing answer lines, when it has more than one.

    The closing run is the last lines that are each an answer line (a marker with an answer,
    or a line that is all bold), with only blank lines between them.
    """
    if _answer_of(_last_line(text)) is None:
        return ()  # the common case, decided without reading the rest of the reply
    lines = [line for line in text.strip().splitlines() if line.strip()]
    found: list[str] = []
    for line in reversed(lines):
        if _HEADING_RE.match(line):
            continue  # "**Απάντηση**" over the answer is its heading, not a second answer
        answer = _answer_of(line)
        if answer is None:
            break
        if found and _CORRECTION_RE.search(line):
            break  # a line that takes itself back: the answer lines after it settle it
        found.append(answer)
    distinct = tuple(dict.fromkeys(answer for answer in found if answer))
    return distinct if len(distinct) > 1 else ()


_NUMBER = r"\d+(?:[.,]\d+)?"
_RANGE_RE = re.compile(
    rf"{_NUMBER}\s*(?:[–—]|-(?!\s*\d+\s*=)|\.\.|to|{accent_tolerant('εως')}|ως|"
    rf"{accent_tolerant('μεχρι')})\s*{_NUMBER}"
    rf"|\bbetween\s+{_NUMBER}\s+and\s+{_NUMBER}"
    rf"|{accent_tolerant('αναμεσα')}\s+(?:σε|στο|στα)\s+{_NUMBER}\s+και\s+{_NUMBER}"
    rf"|{_NUMBER}\s*(?:±|\\pm|\+/-|\+-)\s*{_NUMBER}",
    re.I,
)


# Every range has one of these; most answers have none, and this search is cheap.
_RANGE_HINT_RE = re.compile(
    r"[–—±-]|\.\.|\\pm|\bto\b|\bbetween\b|" + accent_tolerant("εως|ως|μεχρι|αναμεσα"), re.I
)


@lru_cache(maxsize=16384)
def states_range(answer: str, key: str) -> str | None:
    """The range or tolerance a final answer gives instead of one value, unless the key is one.

    Only a range that is the answer counts: "From 2019 to 2021, a total of 48" states 48.
    """
    if _RANGE_HINT_RE.search(answer) is None or _RANGE_RE.search(key):
        return None
    match = _RANGE_RE.search(answer)
    if match is None or _DIGIT_RE.search(_RANGE_RE.sub(" ", answer)):
        return None
    return match.group(0)


_DIGIT_RE = re.compile(r"\d")


_IF = accent_tolerant(r"(?:αν|εαν|εκτος αν|σε περιπτωση που)")
# «αν και» and "even if" concede («Αθήνα, αν και η Πάτρα είναι κοντά»); they set no condition.
_CONDITION_RE = re.compile(
    rf"(?<![^\W_])(?<!{accent_tolerant('ακομα')} κι )(?<!even )(?:{_IF}|if|unless)(?![^\W_])"
    rf"(?!\s+(?:και|κι)\b)",
    re.I,
)


_OTHERWISE_RE = re.compile(
    r"(?<![^\W_])(?:"
    + accent_tolerant(r"αλλιως|ειδαλλως|ειδ' αλλως|διαφορετικα|σε αντιθετη περιπτωση")
    + r"|otherwise|or else)(?![^\W_])",
    re.I,
)
"""The second branch of a conditional («Αν …, Χ· αλλιώς Υ», "if …, X, otherwise Y")."""


def otherwise(text: str) -> re.Match[str] | None:
    """The first «αλλιώς» ("otherwise") of `text`, which opens another outcome."""
    return _OTHERWISE_RE.search(text)


def conditions(text: str) -> list[re.Match[str]]:
    """The conditional words («αν», "if", "unless") of `text`."""
    return list(_CONDITION_RE.finditer(text))


_REASON_ASIDE_RE = re.compile(
    r"\s*\((?:since|because|as|from|"
    + accent_tolerant(r"επειδη|αφου|γιατι|διοτι|καθως|αφου")
    + r")\b[^()]*\)",
    re.I,
)


_WORKING_ASIDE_RE = re.compile(r"(?<=\d)\s*\((?=[^()]*=)[^()]*\)")
"""A bracket after a number that holds arithmetic ("85 (40 + 30 = 70, 8 + 7 = 15)")."""


def without_reason_asides(text: str) -> str:
    """`text` without bracketed reasons ("(since 58 + 65 = 123)") and without working in a
    bracket right after the number (class `reason_after_number`): both hold working, whose
    numbers are not the answer."""
    return _WORKING_ASIDE_RE.sub("", _REASON_ASIDE_RE.sub("", text))
