"""Find the final answer inside a model response.

Models state their answer in a handful of ways; we look for them from the most explicit to
the least: a marker ("Final answer:", "Απάντηση:", ...) or a `\\boxed{}` (whichever comes
last in the text, since a model's last statement is its conclusion), then the last
`**bold**` span, then a short first line or sentence that the rest explains (when the last
line is commentary, not an answer), then the last non-empty line. Reasoning in `<think>`
blocks is dropped first so that a thought such as "maybe the answer is 41" can never be
extracted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from llm_eval.scoring.commitment import first_line_answer, more_words_than
from llm_eval.scoring.normalize import LATEX_TEXT_RE, accent_tolerant, tokens
from llm_eval.scoring.sentences import sentence_end, split_sentences

ExtractionRule = Literal["marker", "boxed", "bold", "first_line", "last_line", "empty"]

EXPLICIT_RULES = frozenset({"marker", "boxed", "bold", "first_line"})
"""Rules that find an answer the reply commits to, as opposed to whatever its last line says."""

_THINK_BLOCK_RE = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.S | re.I)
_THINK_OPEN_RE = re.compile(r"<(?:think|thinking|reasoning)>", re.I)
_THINK_CLOSE_RE = re.compile(r"</(?:think|thinking|reasoning)>", re.I)

# Markers are matched case-insensitively with every Greek vowel allowed its accented forms,
# so "ΑΠΑΝΤΗΣΗ:", "Απαντηση:" and "απάντηση :" all match without folding the whole text.
_APANTISI = accent_tolerant("απαντηση")
_GREEKLISH_APANTISI = r"apa(?:n?t|n?d)h?[iyh]s[iyh]"
_MARKER_RE = re.compile(
    rf"""(?:
        \b(?:(?:final\s+)?answer|(?:{accent_tolerant("τελικη")}\s+)?{_APANTISI}
            |(?:teliki\s+)?{_GREEKLISH_APANTISI})
            [\s*_]*[:：]
      | \b(?:answer|{_APANTISI}|{_GREEKLISH_APANTISI})[\s*_]+
            (?:is|{accent_tolerant("ειναι")}|einai)\b[\s*_]*[:：]?
    )""",
    re.X | re.I,
)
# Every marker contains one of these stems; "final"/"τελική" may come up to 16 characters
# before it and the whole marker ends within 48 characters after it.
_MARKER_STEMS = ("answer", "απαντ", "απάντ", "apa")
_MARKER_BEFORE = 16
_MARKER_AFTER = 48
_BOXED_RE = re.compile(r"\\(?:boxed|fbox)\s*\{")
_BOLD_RE = re.compile(r"\*\*(?!\s)(.+?)(?<!\s)\*\*|__(?!\s)(.+?)(?<!\s)__")
_EMPHASIS_EDGES_RE = re.compile(r"^[*_]+(?=\S)|(?<=\S)[*_]+$")
_HAS_WORD_RE = re.compile(r"[^\W_]")

# Closing pleasantries chat models add after the answer; never an answer themselves.
_COURTESY_PHRASES = (
    r"\bhope (?:this|that|it) helps\b",
    r"\blet me know\b",
    r"\bfeel free\b",
    r"\bhappy to help\b",
    r"ελπιζω να (?:σε |σα[σς] )?βοηθησα",
    r"ελπιζω να (?:σα[σς] |σου )?(?:φανηκε|ηταν) χρησιμ",
    r"\bαν (?:χρειαζεσαι|χρειαζεστε|χρειαστει[σς]|χρειαστειτε|θελει[σς]|θελετε)\b",
    r"καλη συνεχεια",
    r"καλ(?:ο|η) (?:ταξιδι|επιτυχια|διασκεδαση|ορεξη|διαβασμα)",
    r"\b(?:good luck|enjoy (?:your|the))\b",
    r"\bπε[σς] μου\b",
    r"\bπειτε μου\b",
    r"\bρωτ(?:α|ηστε) με\b",
    r"^\W*περαστικ",  # a get-well wish closing a reply about an illness
    r"\bμπορω να (?:σου|σα[σς]) (?:γραψω|ετοιμασω|στειλω|φτιαξω)\b",
    r"\b(?:i can|i could) (?:also )?(?:write|draft|prepare)\b",
)
_COURTESY_RE = re.compile("|".join(map(accent_tolerant, _COURTESY_PHRASES)), re.I)
_WRAPPERS = (
    ("**", "**"),
    ("__", "__"),
    ("*", "*"),
    ("_", "_"),
    ("`", "`"),
    ("$$", "$$"),
    ("$", "$"),
    ("\\(", "\\)"),
    ("\\[", "\\]"),
    ('"', '"'),
    ("'", "'"),
    ("«", "»"),
    ("“", "”"),
    ("‘", "’"),
    ("„", "“"),
    ("(", ")"),
    ("[", "]"),
)
_LEADING_JUNK_RE = re.compile(r"^(?:[-*+>#•]+\s+|\d+[.)]\s+(?=\D)|[:：=→]+\s*)")
_TRAILING_PUNCT = " \t.,;:!?…。·"
_LEADING_DECIMAL_RE = re.compile(r"[.,]\d")


@dataclass(frozen=True, slots=True)
class Extraction:
    """The final answer found in a response and how it was found."""

    answer: str | None
    """The cleaned final answer; None when the response has no words at all."""
    rule: ExtractionRule
    """Which rule found it."""
    text: str
    """The response with reasoning blocks removed (what every other rule searches)."""
    boxed: str | None = None
    """The content of the last `\\boxed{}` anywhere in the response, if any."""
    question: bool = False
    """The extracted line ended with a question mark (a follow-up question, not an answer)."""
    context: str = ""
    """The answer's sentence to the end of its line, with an aside paragraph right after it
    ("(or 60 m² if …)"), at most 400 characters: where a hedge around the answer would be."""


def strip_reasoning(response: str) -> str:
    """Remove `<think>` blocks; an unclosed one runs to the end, an orphan close ends one."""
    text = _THINK_BLOCK_RE.sub("\n", response)
    closing = list(_THINK_CLOSE_RE.finditer(text))
    if closing:
        text = text[closing[-1].end() :]
    opening = _THINK_OPEN_RE.search(text)
    if opening:
        text = text[: opening.start()]
    return text.strip()


def _balanced(text: str, start: int) -> tuple[str, int] | None:
    """The content of the brace group opening just before `start`, and where it ends."""
    depth = 1
    for index in range(start, len(text)):
        char = text[index]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return text[start:index], index + 1
    return None


def boxed_spans(text: str) -> list[tuple[int, str]]:
    """Every `\\boxed{...}` in `text` as (offset, content), nested braces included."""
    spans = []
    for match in _BOXED_RE.finditer(text):
        group = _balanced(text, match.end())
        if group is not None:
            spans.append((match.start(), group[0]))
    return spans


def _find_all(text: str, stem: str) -> list[int]:
    found, index = [], text.find(stem)
    while index >= 0:
        found.append(index)
        index = text.find(stem, index + 1)
    return found


def _marker_matches(text: str) -> list[re.Match[str]]:
    """Every answer marker in `text`, in order.

    Scanning a long reply with the full case-insensitive pattern is slow, so the word stems
    are located with `str.find` first and the pattern only runs in a window around each.
    """
    lowered = text.lower()
    if len(lowered) != len(text):  # a rare character changed length: offsets would drift
        return list(_MARKER_RE.finditer(text))
    starts = sorted({i for stem in _MARKER_STEMS for i in _find_all(lowered, stem)})
    matches: list[re.Match[str]] = []
    for start in starts:
        after_previous = matches[-1].end() if matches else 0
        if start < after_previous:
            continue
        window = max(after_previous, start - _MARKER_BEFORE)
        match = _MARKER_RE.search(text, window, start + _MARKER_AFTER)
        if match and (not matches or match.start() >= matches[-1].end()):
            matches.append(match)
    return matches


def _marker_tail(text: str) -> tuple[int, str] | None:
    """The text after the last answer marker (its line, or the next non-empty line)."""
    for match in reversed(_marker_matches(text)):
        rest = text[match.end() :]
        line, _, after = rest.partition("\n")
        if not _HAS_WORD_RE.search(line):
            line = next((ln for ln in after.splitlines() if _HAS_WORD_RE.search(ln)), "")
        if _HAS_WORD_RE.search(line):
            return match.start(), line
    return None


def _answer_from_tail(tail: str) -> str:
    """Reduce a marker's line to its answer: a box or bold inside it, else its first sentence."""
    boxed = boxed_spans(tail)
    if boxed:
        return boxed[-1][1]
    end = sentence_end(tail)
    bold = _BOLD_RE.search(tail)
    # Bold inside the marker's first sentence is the answer itself ("είναι: **Χ**.").
    if bold and (end is None or bold.start() < end.start()):
        return bold.group(1) or bold.group(2)
    return tail[: end.start()] if end else tail


def clean_answer(text: str) -> str:
    """Strip what wraps an answer: whitespace, emphasis, quotes, LaTeX, trailing punctuation."""
    previous = None
    while previous != text:
        previous = text
        text = text.replace("{:}", ":").replace("{,}", ",")
        text = LATEX_TEXT_RE.sub(r"\1", text).strip().rstrip(_TRAILING_PUNCT)
        if not _LEADING_DECIMAL_RE.match(text):  # ".4" is a number, not a stray full stop
            text = text.lstrip(_TRAILING_PUNCT)
        text = _unwrap(_LEADING_JUNK_RE.sub("", text))
        if text.count("**") % 2 or text.count("__") % 2:
            # A bold marker cut in half by the sentence end ("40**" of "**… 40**.") never
            # belongs to the answer.
            text = _EMPHASIS_EDGES_RE.sub("", text)
    return text.strip()


def _unwrap(text: str) -> str:
    """Remove one layer of each wrapping pair that encloses the whole text."""
    for opening, closing in _WRAPPERS:
        if not (text.startswith(opening) and text.endswith(closing)):
            continue
        inner = text[len(opening) : -len(closing)]
        # "(a) or (b)" starts and ends with brackets but is not wrapped by them.
        if inner and opening not in inner and closing not in inner:
            text = inner
    return text


def _last_bold_answer(text: str) -> tuple[str, int] | None:
    """The last bold span that is not a label ("**Ανάλυση:**"), a heading line or a stressed
    little word ("**δεν**"), with its offset."""
    last_line_start = text.rfind("\n", 0, len(text.rstrip())) + 1
    for match in reversed(list(_BOLD_RE.finditer(text))):
        content = match.group(1) or match.group(2)
        if content.rstrip().endswith((":", "：")) or text[match.end() :].startswith(":"):
            continue
        line_start = text.rfind("\n", 0, match.start()) + 1
        line_end = text.find("\n", match.end())
        line = text[line_start : line_end if line_end >= 0 else len(text)]
        # A bold line on its own with more text below it is a heading, not the answer,
        # unless it stands under an answer heading ("## Απάντηση" / "**Final answer:**").
        if (
            line.strip(" #*_") == content.strip()
            and line_start < last_line_start
            and not _under_answer_heading(text, line_start)
        ):
            continue
        words = tokens(content)
        if words and all(word in _STRESSED_WORDS for word in words):
            continue
        return content, match.start()
    return None


_ANSWER_HEADING_RE = re.compile(
    rf"^\s*(?:#+\s*|[*_]+)\s*(?:(?:final\s+)?answer|(?:{accent_tolerant('τελικη')}\s+)?"
    rf"{_APANTISI})\s*[:：]?\s*[*_]*\s*$",
    re.I,
)


def _under_answer_heading(text: str, line_start: int) -> bool:
    """Whether the line starting at `line_start` follows an answer heading (blank lines aside)."""
    end = line_start
    while end > 0:  # walk back over blank lines without splitting the whole reply
        start = text.rfind("\n", 0, end - 1) + 1
        line = text[start : end - 1] if text[end - 1] == "\n" else text[start:end]
        if line.strip():
            return _ANSWER_HEADING_RE.match(line) is not None
        end = start
    return False


# Words a reply puts in bold for stress, never as its answer.
_STRESSED_WORDS = frozenset(
    {"δεν", "δε", "μη", "μην", "οχι", "ουτε", "μονο", "ολα", "ολοι", "ποτε", "not", "only",
     "never", "all", "none", "any", "must", "always", "τελικα", "finally"}
)  # fmt: skip


def _last_line(text: str) -> str:
    """The last line with words, passing over courtesy lines ("Hope this helps!") and the
    check that follows an answer ("Check: 85 − 37 = 48 ✓")."""
    lines = [line for line in text.splitlines() if _HAS_WORD_RE.search(line)]
    while len(lines) > 1 and is_check_line(lines[-1]):
        lines.pop()
    # Walk up from the end: usually the very last line is already the answer.
    answer = next((line for line in reversed(lines) if not _COURTESY_RE.search(line)), None)
    return answer if answer is not None else (lines[-1] if lines else "")


_CHECK_RE = re.compile(
    rf"^\W*(?:check|verification|verify|checking|sanity check|double-check|proof"
    rf"|{accent_tolerant('ελεγχος')}|{accent_tolerant('επαληθευση')}|elegxos)\b",
    re.I,
)


def is_check_line(line: str) -> bool:
    """A line that checks an answer already given ("Check: 300 + 112 = 412 ✓")."""
    return _CHECK_RE.match(line.strip()) is not None


def is_courtesy(sentence: str) -> bool:
    """Whether a sentence is a pleasantry around the answer ("Hope this helps!", «Αν θέλεις,
    μπορώ να σου γράψω…», «Περαστικά!»), never the answer itself."""
    return _COURTESY_RE.search(sentence) is not None


def without_courtesy_tail(text: str) -> str:
    """`text` up to the closing pleasantry and the checks of its last lines."""
    lines = text.rstrip().splitlines()
    while len(lines) > 1 and (is_check_line(lines[-1]) or not lines[-1].strip()):
        lines.pop()
    while lines and _COURTESY_RE.search(lines[-1]):
        match = _COURTESY_RE.search(lines[-1])
        assert match is not None
        head = lines[-1][: match.start()].rstrip()
        if head:
            lines[-1] = head
            break
        lines.pop()
    return "\n".join(lines) if lines else text


def _ends_with_question(line: str) -> bool:
    return line.strip().rstrip("*_ )»\"'").endswith(("?", ";", "\u037e"))


@lru_cache(maxsize=4096)
def extract_answer(response: str) -> Extraction:
    """The final answer of a response, and the rule that found it (cached: rescoring several
    models asks for the same response's answer once per rule chain and variant)."""
    text = strip_reasoning(response)
    if not _HAS_WORD_RE.search(text):
        return Extraction(answer=None, rule="empty", text=text)
    boxed = boxed_spans(text)
    last_boxed = boxed[-1][1] if boxed else None
    marker = _marker_tail(text)
    if marker is not None and (not boxed or marker[0] > boxed[-1][0]):
        answer = clean_answer(_answer_from_tail(marker[1]))
        return Extraction(answer, "marker", text, last_boxed, context=_context(text, marker[0]))
    if last_boxed is not None:
        context = _context(text, boxed[-1][0])
        return Extraction(clean_answer(last_boxed), "boxed", text, last_boxed, context=context)
    bold = _last_bold_answer(text)
    if bold is not None:
        context = _context(text, bold[1])
        return Extraction(clean_answer(bold[0]), "bold", text, context=context)
    labelled = _labelled_lead(text)
    if labelled is not None:
        answer = clean_answer(labelled)
        return Extraction(answer, "first_line", text, context=_context(text, text.find(labelled)))
    line = _last_line(text)
    asks = _ends_with_question(line)
    if asks or more_words_than(line, _ANSWER_LINE_TOKENS):
        first = first_line_answer(text)
        answer = clean_answer(first) if first is not None else ""
        if first is not None and answer:
            return Extraction(answer, "first_line", text, context=_context(text, text.find(first)))
    context = _context(text, text.rfind(line))
    return Extraction(clean_answer(line), "last_line", text, question=asks, context=context)


_LABELLED_LEAD_RE = re.compile(r"^\s*(?:\*\*|__)([^*_\n:]{1,40}):(?:\*\*|__)\s*(\S[^\n]*)$")
_BULLET_RE = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")


def _labelled_lead(text: str) -> str | None:
    """The value of a bold-labelled first line that a bullet list then breaks down
    («**Επιστροφή:** 84,10 €» over «- Αρχική χρέωση: 134,10 €»): the lines below are the
    working, the first line the answer. None for any other shape."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if len(lines) < 2:
        return None
    lead = _LABELLED_LEAD_RE.match(lines[0])
    if lead is None or not all(_BULLET_RE.match(line) for line in lines[1:]):
        return None
    return lead.group(2).strip()


def _context(text: str, offset: int) -> str:
    """From the sentence holding `offset` to the end of its line, and the next paragraph too
    when it is an aside in brackets."""
    start = text.rfind("\n", 0, max(offset, 0)) + 1
    end = text.find("\n", max(offset, 0))
    before = split_sentences(text[start : max(offset, start)])
    if len(before) > 1:  # earlier sentences of the line are working, not the answer
        start += sum(len(sentence) for sentence in before[:-1])
    line = text[start : end if end >= 0 else len(text)]
    rest = text[end:].lstrip() if end >= 0 else ""
    if rest.startswith(("(", "[")):
        line += " " + rest.splitlines()[0]
    return line.strip()[:_CONTEXT_CHARS]


_CONTEXT_CHARS = 400
"""A hedge further than this from the start of the answer's sentence is not about it."""


_ANSWER_LINE_TOKENS = 5
"""A last line longer than this is commentary; a short first line may then be the answer."""
