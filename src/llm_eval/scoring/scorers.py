"""The scorer kinds (`language`, `numeric`, `exact`), their rule chains and the registry.

A built-in scorer is an ordered chain of rules (SPEC 9): extract the final answer, then
exact normalised comparison, then `answer_regex`, then normalised containment on word
boundaries; `language` adds number words, dates, transliteration and token coverage. Each
rule either credits the answer (match), rules it out (veto) or passes to the next; the
first rule that does not pass decides, and its name becomes the verdict's `method`.

The committed answer. Rules judge the head of the answer span (`commitment.py`): the
first clause that offers something, before its reasons and asides, or the head of its
conclusion. A decoy named in a reason, a negated clause or a "changed from" clause does not
veto; an answer named only there is not credited. The rest of the response is searched only
when the model gave no answer span of its own (no marker, box, bold or first-line answer)
and its last line is commentary rather than an answer.

Hedging. A segment that offers the answer as one alternative among others ("Μαρία ή
Μαρίνα", "either Maria or Marina", "Maria/Marina", a bare list "Μαρία, Μαρίνα") never earns
credit (`hedged`), and neither does an answer beside an aside that offers another
candidate ("412 (or possibly 413)", «Τρίτη, ίσως και Τετάρτη»), in every scorer.

Yes/no. When the expected answer is yes or no, the first yes/no word of the final answer
(or, failing that, of the first line) is the reply; "όχι, δεν είναι ναι" is a no, and "ναι
ή όχι" or "yes and no" hedge. Containment never looks for "ναι" elsewhere.

Numbers. The `numeric` scorer reads the last `\\boxed{}` first, and a wrong box is final
(`boxed_mismatch`) even if the right number appears elsewhere; without a box, a marked
answer decides, and without a marker the last number of the response does, unless the
reply ends on a step still to do (`unfinished`). A reply cut off before it committed to an
answer is `truncated` (`score_key(..., truncated=True)`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import cached_property
from typing import Literal

from llm_eval.registry import Registry
from llm_eval.scoring.commitment import (
    NEGATIVE_QUESTION,
    alternative_number,
    aside_hedge,
    gloss_after_head,
    has_hedge_cue,
    head_text,
    rejects,
    unfinished_step,
)
from llm_eval.scoring.extraction import (
    EXPLICIT_RULES,
    Extraction,
    boxed_spans,
    extract_answer,
    without_courtesy_tail,
)
from llm_eval.scoring.matchers import (
    STOPWORDS,
    RegexTimeout,
    answer_content,
    answer_date,
    answer_number,
    competing_candidate,
    conclusion_of,
    content_tokens,
    covers,
    dates_in,
    echo_share,
    english_polar_word,
    exact_match,
    first_polarity,
    is_hedged,
    numbers_in,
    offered_tokens,
    offers,
    one_edit_apart,
    passage_words,
    polarity,
    regex_candidates,
    regex_match,
    same_date,
    says_both,
    tokens_equal,
)
from llm_eval.scoring.normalize import (
    fold_text,
    has_greek,
    has_latin,
    number_words,
    plain,
    tokens,
)
from llm_eval.scoring.numeric import (
    Reading,
    agrees,
    expected_value,
    first_reading,
    has_expression,
    last_reading,
    math_text,
    math_verify_reading,
    stated_reading,
)
from llm_eval.scoring.result import AnswerKey, RuleTrace, ScoreResult
from llm_eval.scoring.sentences import split_sentences

Scorer = Callable[[str, AnswerKey], ScoreResult]
"""A scorer: `(response, answer key) -> verdict`; registered with `@register_scorer`."""
Status = Literal["match", "veto", "pass"]

_COMMENTARY_WORDS = 4


class Context:
    """One response and expected answer, with everything the rules derive from them cached."""

    def __init__(self, response: str, key: AnswerKey) -> None:
        self.response = response
        self.key = key
        self.answer = key.answer
        self.answer_regex = key.answer_regex
        self.rivals: dict[str, str | None] = {}
        """`_rival`'s findings, by the text searched."""

    @cached_property
    def extraction(self) -> Extraction:
        return extract_answer(self.response)

    @property
    def extracted(self) -> str:
        """The extracted final answer, "" for an empty response."""
        return self.extraction.answer or ""

    @cached_property
    def span(self) -> str:
        """The span offered as the answer: the extracted answer, or the last sentence of a
        last line that is commentary (its conclusion)."""
        if not self.searches_raw:
            return self.extracted
        sentences = [s for s in split_sentences(self.extracted) if tokens(s)]
        return sentences[-1] if sentences else self.extracted

    @cached_property
    def negation(self) -> bool:
        """Whether a negation in the reply rejects what it governs: not when the question
        itself asks about a negative ("Ποιος δεν έρχεται;")."""
        question = self.key.question or ""
        stem = question.rsplit("»", 1)[-1] if "»" in question else question
        return NEGATIVE_QUESTION.search(stem) is None

    @cached_property
    def head(self) -> str:
        """The committed part of the span: before its reasons and asides."""
        return head_text(self.span, self.negation) or self.span

    @cached_property
    def conclusion_head(self) -> str:
        """The head of what follows the last conclusion marker ("άρα", "so") of the span, or,
        for a first-line answer, of the reply's last sentence; "" when there is none."""
        where = self.span
        if self.extraction.rule == "first_line":
            lines = self.raw_lines
            sentences = [s for s in split_sentences(lines[-1]) if tokens(s)] if lines else []
            where = sentences[-1] if sentences else ""
        conclusion = conclusion_of(where)
        if not conclusion or conclusion == where:
            return ""
        return head_text(conclusion, self.negation)

    @cached_property
    def answer_tokens(self) -> tuple[str, ...]:
        return tokens(self.answer)

    @cached_property
    def answer_polarity(self) -> bool | None:
        """True/False when the expected answer is a yes/no word, else None."""
        folded = self.answer_tokens
        return polarity(folded[0]) if len(folded) == 1 else None

    @cached_property
    def searches_raw(self) -> bool:
        """Whether containment may look past the extracted answer (see the module docstring)."""
        extraction = self.extraction
        return extraction.rule == "last_line" and (
            extraction.question or len(content_tokens(self.extracted)) >= _COMMENTARY_WORDS
        )

    @property
    def transliterates(self) -> bool:
        """Whether Greeklish spellings may stand for Greek ones (not when Greek is demanded)."""
        return self.key.answer_script != "greek"

    @cached_property
    def raw_lines(self) -> list[str]:
        """The response's lines that contain at least one word or number."""
        return [line for line in self.extraction.text.splitlines() if tokens(line)]


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one rule concluded."""

    status: Status
    detail: str
    method: str | None = None
    """For a veto, the verdict's method when it differs from the rule's name."""


def _match(detail: str) -> Outcome:
    return Outcome("match", detail)


def _veto(detail: str, method: str = "no_match") -> Outcome:
    return Outcome("veto", detail, method)


def _pass(detail: str) -> Outcome:
    return Outcome("pass", detail)


@dataclass(frozen=True, slots=True)
class Rule:
    """A named check in a scorer's chain."""

    name: str
    check: Callable[[Context], Outcome]


def search(
    ctx: Context,
    found: Callable[[str], bool],
    what: str,
    near: Callable[[str], bool] | None = None,
) -> Outcome:
    """Look for the answer in the committed answer, then (if allowed) in the response's lines.

    The committed answer is the head of the extracted span: its first clause that offers
    something, before the reasons, asides and rejected candidates that follow it. A hit
    inside a segment that hedges on it (`near` tells which words are the answer) vetoes with
    method `hedged`, and so does an aside offering another candidate ("(ή ίσως Τετάρτη)");
    a hit beside one of the task's distractors in the head vetoes with method `distractor`.
    """
    if ctx.extracted and found(ctx.extracted):
        if is_hedged(ctx.extracted, near=near):
            return _veto(f"{what} in a hedged answer {ctx.extracted!r}", "hedged")
        return _committed(ctx, found, what)
    if not ctx.searches_raw:
        return _pass(f"no {what} in the extracted answer {ctx.extracted!r}")
    hits = [line for line in ctx.raw_lines if found(line)]
    hedged = next((line for line in hits if is_hedged(line, near=near)), None)
    if hedged is not None:
        return _veto(f"{what} in a hedged line {hedged.strip()!r}", "hedged")
    if hits:
        rival = _rival(ctx, ctx.extraction.text)
        if rival is not None:
            return _veto(f"the response also offers the decoy {rival!r}", "distractor")
        return _match(f"{what} in the response line {hits[0].strip()!r}")
    return _pass(f"no {what} in the extracted answer or the response")


def _committed(ctx: Context, look: Callable[[str], bool], what: str) -> Outcome:
    """Judge the answer the reply commits to: the head of its conclusion, else of its span."""
    seen: dict[str, bool] = {}

    def found(text: str) -> bool:  # the head is often the whole span: look once
        if text not in seen:
            seen[text] = look(text)
        return seen[text]

    conclusion, head = ctx.conclusion_head, ctx.head
    if ctx.extraction.rule == "first_line" and conclusion and found(head):
        if not found(conclusion) and (rival := _rival(ctx, conclusion)) is not None:
            return _veto(f"the reply concludes {conclusion!r}, naming {rival!r}", "distractor")
        conclusion = ""  # the first line is the answer; the conclusion only agrees with it
    if conclusion and found(conclusion):
        head = conclusion
    elif conclusion and (rival := _rival(ctx, conclusion)) is not None:
        return _veto(f"the conclusion {conclusion!r} offers the decoy {rival!r}", "distractor")
    elif not found(head):
        gloss = gloss_after_head(ctx.span, head)
        if gloss is None or not found(gloss) or _rival(ctx, head) is not None:
            return _pass(f"{what} only in the reasons of {ctx.span!r}, not in {head!r}")
        return _match(f"{what} in {gloss!r}, a gloss of the committed answer {head!r}")
    if rejects(ctx.span, head, ctx.answer_tokens, ctx.negation):
        return _veto(f"the committed answer {head!r} rejects {ctx.answer!r}", "negated")
    rival = _rival(ctx, head)
    if rival is not None:
        return _veto(f"the committed answer {head!r} also offers the decoy {rival!r}", "distractor")
    other = _aside_candidate(ctx, ctx.span, head) if ctx.span.strip() != head else None
    if other is not None:
        return _veto(f"an aside of {ctx.span!r} offers {other!r} as another answer", "hedged")
    return _match(f"{what} in the committed answer {head!r}")


def _aside_candidate(ctx: Context, span: str, head: str) -> str | None:
    """Another candidate a hedge cue offers outside the head ("Mia (possibly Kate)")."""
    if not has_hedge_cue(span):
        return None
    decoys = {word for distractor in ctx.key.distractors for word in content_tokens(distractor)}
    answer = set(ctx.answer_tokens)
    names = frozenset() if decoys else _capitalised_words(span)

    def is_candidate(word: str) -> bool:
        if word in answer or word in STOPWORDS:
            return False
        # With no decoys listed, a name a hedge cue offers competes ("possibly Kate").
        return word in decoys if decoys else word in names

    return aside_hedge(span, head, is_candidate)


def _capitalised_words(text: str) -> frozenset[str]:
    """The folded tokens of the words `text` writes with a capital letter."""
    return frozenset(
        token for word in re.findall(r"[^\W\d_]+", text) if word[0].isupper()
        for token in tokens(word)
    )  # fmt: skip


def _rival(ctx: Context, text: str) -> str | None:
    """A distractor of the task that `text` offers beside the answer (once per text: the
    committed answer is often asked about by several rules)."""
    if not ctx.key.distractors:
        return None
    if text not in ctx.rivals:
        ctx.rivals[text] = competing_candidate(
            text, ctx.key.answers, ctx.key.distractors, transliterate=ctx.transliterates
        )
    return ctx.rivals[text]


def _near_answer(ctx: Context, *, transliterate: bool) -> Callable[[str], bool]:
    """Whether a word is one of the expected answer's words (for the hedging check)."""
    return lambda word: any(
        tokens_equal(word, part, transliterate=transliterate) for part in ctx.answer_tokens
    )


# --- Rules shared by every kind -----------------------------------------------------------


def _empty_response(ctx: Context) -> Outcome:
    if ctx.extraction.answer is None:
        return _veto("the response has no words", "empty_response")
    return _pass(f"final answer {ctx.extracted!r} found by rule {ctx.extraction.rule!r}")


def _exact(ctx: Context) -> Outcome:
    if exact_match(ctx.extracted, ctx.answer):
        return _match(f"{fold_text(ctx.extracted)!r} equals the expected answer")
    return _pass(f"{fold_text(ctx.extracted)!r} != {fold_text(ctx.answer)!r}")


def _regex(ctx: Context, *, raw: bool = True) -> Outcome:
    if not ctx.answer_regex:
        return _pass("no answer_regex")
    candidates = regex_candidates(ctx.extracted, ctx.extraction.text if raw else None)
    try:
        hit = regex_match(ctx.answer_regex, candidates)
    except RegexTimeout as exc:
        return _pass(str(exc))
    if hit is not None:
        return _match(f"answer_regex {ctx.answer_regex!r} matches {hit[:80]!r}")
    return _pass(f"answer_regex {ctx.answer_regex!r} matches nothing")


def _yes_no(ctx: Context) -> Outcome:
    """A yes/no answer is read from the first yes/no word of the answer (or the first line)."""
    expected = ctx.answer_polarity
    if expected is None:
        return _pass("the expected answer is not yes/no")
    for where, text in (("extracted answer", ctx.extracted), ("first line", _first_line(ctx))):
        given = first_polarity(text)
        if given is None:
            continue
        # "όχι, δεν είναι ναι" is a no that quotes a yes, not a list: only "ή"/"or" or
        # "yes and no" hedge.
        if is_hedged(text, near=_is_polar, lists=False) or says_both(text):
            return _veto(f"the {where} hedges between yes and no: {text!r}", "hedged")
        word = "yes" if given else "no"
        if has_greek(ctx.answer) and english_polar_word(text):
            # "Yes" for «ναι» translates the answer: a word of another language (policy).
            return _veto(
                f"the {where} answers in English ({word}) for {ctx.answer!r}", "wrong_language"
            )
        if given == expected:
            return _match(f"the {where} says {word}")
        return _veto(f"the {where} says {word}")
    return _pass("no yes/no word in the final answer or the first line")


def _is_polar(word: str) -> bool:
    return polarity(word) is not None


def _first_line(ctx: Context) -> str:
    return ctx.raw_lines[0] if ctx.raw_lines else ""


def _containment(ctx: Context, *, single_word_only: bool = False) -> Outcome:
    if ctx.answer_polarity is not None:
        return _pass("yes/no answers are decided by the yes_no rule")
    if single_word_only and len(ctx.answer_tokens) != 1:
        return _pass("containment applies to single-word answers only")
    return search(
        ctx,
        lambda text: offers(ctx.answer_tokens, text, transliterate=False),
        "the expected answer as whole words",
        _near_answer(ctx, transliterate=False),
    )


def _closing_boxes(ctx: Context) -> Outcome:
    """Boxes with different contents closing a response list alternatives: no commitment."""
    if ctx.extraction.rule != "boxed":
        return _pass("the final answer is not a box")
    paragraph = re.split(r"\n\s*\n", ctx.extraction.text.rstrip())[-1]
    contents = {fold_text(content) for _, content in boxed_spans(paragraph)}
    if len(contents) > 1:
        return _veto(f"the closing boxes list alternatives: {sorted(contents)}", "hedged")
    return _pass("one boxed answer")


def _alternatives(ctx: Context) -> Outcome:
    """Around the committed answer, a cue ("or", "possibly", "ίσως") offering another one."""
    context = ctx.extraction.context
    if not context or ctx.answer_polarity is not None:
        return _pass("no answer line to look around")
    if not has_hedge_cue(context):
        return _pass(f"no word offering another answer in {context.strip()[:80]!r}")
    # A number written in digits; "Mia" reads as the Greeklish word for one, not a number.
    expected = _expected_number(ctx) if any(c.isdigit() for c in ctx.answer) else None
    if expected is not None:
        committed = _read(ctx.head, has_greek(context), first=True)
        other = alternative_number(context, committed) if committed else None
    else:
        other = _aside_candidate(ctx, context, ctx.head)
    if other is not None:
        return _veto(f"{context.strip()!r} also offers {other!r} as the answer", "hedged")
    return _pass(f"nothing else offered as the answer in {context.strip()[:80]!r}")


def _answer_format(ctx: Context) -> Outcome:
    """The task's format demands: Greek script, digits, or the answer exactly as written."""
    key = ctx.key
    if not key.answer_format and key.answer_script != "greek":
        return _pass("no format demand")
    if key.answer_format == "verbatim":
        text = ctx.extracted
        if _verbatim(text) in {_verbatim(answer) for answer in key.answers}:
            return _match(f"{text!r} is written exactly as demanded")
        return _veto(f"{text!r} is not written exactly as {key.answer!r}", "not_verbatim")
    text = ctx.head
    if key.answer_script == "greek" and has_latin(text) and not has_greek(text):
        return _veto(f"the task demands Greek script; {text!r} is Latin", "wrong_script")
    if key.answer_format == "digits" and not any(c.isdigit() for c in text):
        return _veto(f"the task demands digits; {text!r} has none", "wrong_format")
    return _pass("no format demand, or the final answer meets it")


def _verbatim(text: str) -> str:
    """Case and spacing aside, the text as written: accents and spelling count."""
    return " ".join(unicodedata.normalize("NFC", text).casefold().split()).strip(".!;·")


# --- Rules of the language scorer ---------------------------------------------------------

_ECHO_SHARE = 0.7
"""A response repeating this share of the passage's content words copies it back."""
_ECHO_MIN_WORDS = 4
"""Passages shorter than this (in distinct content words) are too short to tell an echo."""
_SEPARATE_ANSWER_WORDS = 6
"""An explicit final answer of at most this many content words stands apart from an echo."""


def _echo(ctx: Context) -> Outcome:
    """A response that copies the passage back, without a final answer of its own, is wrong."""
    question = ctx.key.question
    if ctx.answer_polarity is not None:
        return _pass("a yes/no answer is read from its first yes/no word")
    if not question or len(passage_words(question)) < _ECHO_MIN_WORDS:
        return _pass("no passage long enough to be echoed")
    if _has_separate_answer(ctx):
        return _pass(f"the response gives a separate final answer {ctx.extracted!r}")
    share = echo_share(ctx.extraction.text, question)
    if share >= _ECHO_SHARE:
        return _veto(
            f"the response copies {share:.0%} of the passage and gives no separate final answer",
            "echo",
        )
    return _pass(f"the response copies {share:.0%} of the passage")


def _has_separate_answer(ctx: Context) -> bool:
    words = len(content_tokens(ctx.extracted))
    if ctx.extraction.rule in ("marker", "boxed", "bold"):
        return words <= _SEPARATE_ANSWER_WORDS
    return ctx.extraction.rule == "last_line" and len(ctx.raw_lines) > 1 and words <= 3


def _number_words(ctx: Context) -> Outcome:
    expected = answer_number(ctx.answer)
    if expected is None or ctx.answer_polarity is not None:
        return _pass("the expected answer is not a number")
    greek = has_greek(ctx.extraction.text)
    return search(ctx, lambda text: expected in numbers_in(text, greek), f"the number {expected}")


def _date(ctx: Context) -> Outcome:
    expected = answer_date(ctx.answer)
    if expected is None:
        return _pass("the expected answer is not a date")
    return search(
        ctx,
        lambda text: any(same_date(expected, found) for found in dates_in(text)),
        f"the date {expected[0]}/{expected[1]}",
    )


def _transliteration(ctx: Context) -> Outcome:
    if ctx.answer_polarity is not None:
        return _pass("yes/no answers are decided by the yes_no rule")
    if not ctx.transliterates:
        return _pass("the task demands Greek script: no transliteration")
    return search(
        ctx,
        lambda text: offers(ctx.answer_tokens, text, transliterate=True),
        "the expected answer, with Greek/Greeklish spellings allowed,",
        _near_answer(ctx, transliterate=True),
    )


def _token_coverage(ctx: Context) -> Outcome:
    needed = answer_content(ctx.answer)
    if ctx.answer_polarity is not None or not needed:
        return _pass("nothing to cover")
    return search(
        ctx,
        lambda text: covers(needed, offered_tokens(text), transliterate=ctx.transliterates),
        f"every content word of {needed}",
        _near_answer(ctx, transliterate=True),
    )


_SLIP_MIN_LETTERS = 6
"""Answer words this long may carry a one-letter slip; shorter ones are too close to others."""


def _near_spelling(ctx: Context) -> Outcome:
    """A one-letter slip in a long answer word ("Θεσαλονίκη"), when nothing else is that close.

    The slipped word must not be a word of the passage (Μαρία for Μαρίνα is another name),
    nor one letter from any other word of it or from a decoy.
    """
    needed = answer_content(ctx.answer)
    if ctx.answer_polarity is not None or len(needed) != 1:
        return _pass("a slip is allowed in one-word answers only")
    if not ctx.key.question:
        return _pass("without the passage a slip cannot be told from another of its words")
    target = plain(needed[0])
    if len(target) < _SLIP_MIN_LETTERS or not target.isalpha():
        return _pass(f"{ctx.answer!r} is too short for a slip to be told from another word")
    passage = {plain(w) for w in tokens(ctx.key.question)} - {target}
    passage |= {plain(w) for d in ctx.key.distractors for w in tokens(d)}
    head = ctx.head if ctx.extraction.rule == "first_line" else ctx.conclusion_head or ctx.head
    for word in map(plain, tokens(head)):
        # A change of the last letter is another form of the word (Λονδίνου, κίνησης,
        # δεύτερη), which the other rules judge; a slip is inside the word.
        if _ending_change(word, target) or not one_edit_apart(word, target):
            continue
        if word in passage or any(one_edit_apart(word, other) for other in passage):
            return _pass(f"{word!r} is one letter from {target!r} but also from the passage")
        return _match(f"{word!r} is {target!r} with one letter slipped")
    return _pass(f"no word of {head!r} is one letter from {target!r}")


def _ending_change(word: str, target: str) -> bool:
    """The two words differ only in their last letter: an inflection, not a slip."""
    return word[:-1] == target[:-1] or word[:-1] == target or word == target[:-1]


# --- Rules of the numeric scorer ----------------------------------------------------------


def _expected_number(ctx: Context) -> Fraction | None:
    """The expected answer as a number: digits, words, or a fraction such as "1/2"."""
    value = answer_number(ctx.answer)
    return value if value is not None else expected_value(ctx.answer)


def _read(text: str, greek: bool, *, first: bool = False) -> Reading | None:
    """The values a final answer states; Math-Verify reads what our rules cannot."""
    reading = first_reading(text, greek) if first else stated_reading(text, greek)
    if reading is None and has_expression(text):
        return math_verify_reading(math_text(text).rsplit("=", 1)[-1].strip())
    return reading


def _numeric_boxed(ctx: Context) -> Outcome:
    boxed = ctx.extraction.boxed
    expected = _expected_number(ctx)
    if boxed is None or expected is None:
        return _pass("no \\boxed{} answer" if boxed is None else "the answer is not a number")
    if ctx.extraction.rule != "boxed":
        return _pass("a later answer marker overrides the \\boxed{} answer")
    # Boxes listing alternatives were vetoed earlier, by `boxed_alternatives`.
    given = _read(boxed, has_greek(ctx.extraction.text))
    if given is not None and agrees(expected, given):
        return _match(f"\\boxed{{{boxed}}} is {_show(expected)}")
    return _veto(
        f"\\boxed{{{boxed}}} states {_shown(given)}, not {_show(expected)}", "boxed_mismatch"
    )


def _numeric_marker(ctx: Context) -> Outcome:
    expected = _expected_number(ctx)
    if ctx.extraction.rule not in ("marker", "bold") or expected is None:
        return _pass("no answer marker" if expected is not None else "the answer is not a number")
    given = _read(ctx.extracted, has_greek(ctx.extraction.text), first=True)
    if given is None:
        return _pass(f"the marked answer {ctx.extracted!r} has no number")
    if agrees(expected, given):
        return _match(f"the marked answer {ctx.extracted!r} is {_show(expected)}")
    return _veto(f"the marked answer {ctx.extracted!r} states {_shown(given)}")


def _numeric_last(ctx: Context) -> Outcome:
    expected = _expected_number(ctx)
    if expected is None:
        return _pass("the answer is not a number")
    text = without_courtesy_tail(ctx.extraction.text)
    step = unfinished_step(text)
    if step is not None:
        return _veto(f"the reply ends on a step still to do: {step!r}", "unfinished")
    last = last_reading(_with_committed_last_line(text))
    if last is None:
        return _pass("the response has no number written in digits")
    written, values = last
    if values is not None and agrees(expected, values):
        return _match(f"the last number in the response, {written[:80]!r}, is {_show(expected)}")
    return _veto(f"the last number in the response is {written[:80]!r} ({_shown(values)}), "
                 f"not {_show(expected)}")  # fmt: skip


def _with_committed_last_line(text: str) -> str:
    """`text` with its last line cut to its head when the rest is an aside with no working:
    "21 students passed (75% of the class)" states 21, not 75."""
    lines = text.rstrip().splitlines()
    if not lines:
        return text
    last = lines[-1].strip()
    head = head_text(last)
    # Only an aside that follows the head is dropped ("21 … (75% …)"); brackets that open
    # the line hold the answer itself ("\\( (9+1) \\)").
    if not head or not last.startswith(head) or not any(c.isdigit() for c in head):
        return text
    if not re.search(r"[=≈→]", last[len(head) :]):
        lines[-1] = head
    return "\n".join(lines)


def _numeric_words(ctx: Context) -> Outcome:
    expected = _expected_number(ctx)
    spelled = number_words(tokens(ctx.extracted))
    if expected is None or not spelled:
        return _pass("no number spelled out in the final answer")
    if spelled[-1] == expected:
        return _match(f"the final answer spells {spelled[-1]}")
    return _veto(f"the final answer spells {spelled[-1]}, not {_show(expected)}")


def _shown(reading: Reading | None) -> str:
    if not reading:
        return "no single rational number"
    return " or ".join(sorted(_show(value) for value in reading))


def _show(value: Fraction | None) -> str:
    if value is None:
        return "no single number"
    if abs(value.numerator) > 10**50:  # too long to print, or to convert to a float
        digits = int(abs(value.numerator).bit_length() * 0.30103) + 1
        return f"a number of about {digits} digits"
    return str(value.numerator) if value.denominator == 1 else f"{float(value):g}"


# --- Chains and registry ------------------------------------------------------------------

LANGUAGE_RULES: tuple[Rule, ...] = (
    Rule("empty_response", _empty_response),
    Rule("boxed_alternatives", _closing_boxes),
    Rule("alternatives", _alternatives),
    Rule("answer_format", _answer_format),
    Rule("echo", _echo),
    Rule("exact", _exact),
    Rule("regex", _regex),
    Rule("yes_no", _yes_no),
    Rule("containment", _containment),
    Rule("number_words", _number_words),
    Rule("date", _date),
    Rule("transliteration", _transliteration),
    Rule("token_coverage", _token_coverage),
    Rule("near_spelling", _near_spelling),
)
EXACT_RULES: tuple[Rule, ...] = (
    Rule("empty_response", _empty_response),
    Rule("boxed_alternatives", _closing_boxes),
    Rule("alternatives", _alternatives),
    Rule("answer_format", _answer_format),
    Rule("exact", _exact),
    Rule("regex", _regex),
    Rule("yes_no", _yes_no),
    Rule("containment", lambda ctx: _containment(ctx, single_word_only=True)),
    Rule("near_spelling", _near_spelling),
)
NUMERIC_RULES: tuple[Rule, ...] = (
    Rule("empty_response", _empty_response),
    Rule("boxed_alternatives", _closing_boxes),
    Rule("alternatives", _alternatives),
    Rule("answer_format", _answer_format),
    Rule("exact", _exact),
    # With a box in the response the box is the answer: the regex may not rescue it from
    # the raw text.
    Rule("regex", lambda ctx: _regex(ctx, raw=ctx.extraction.boxed is None)),
    Rule("numeric_boxed", _numeric_boxed),
    Rule("numeric_marker", _numeric_marker),
    Rule("numeric_last", _numeric_last),
    Rule("number_words", _numeric_words),
)

RuleChain = Callable[[Context], Sequence[Rule]]
# Scorers written in other modules of this folder register when the registry is first read.
SCORER_KINDS: Registry[Scorer] = Registry("scorer kind", "llm_eval.scoring")
_RULE_CHAINS: dict[str, RuleChain] = {}


def register_scorer(kind: str, *, rules: RuleChain | None = None) -> Callable[[Scorer], Scorer]:
    """Register `fn(response, key: AnswerKey) -> ScoreResult` as the scorer `kind`.

    `rules`, when given, lets `explain_text` show each rule of the chain; a scorer
    registered without it is explained by its verdict alone.
    """

    def decorate(scorer: Scorer) -> Scorer:
        SCORER_KINDS.register(kind)(scorer)
        if rules is not None:
            _RULE_CHAINS[kind] = rules
        else:
            _RULE_CHAINS.pop(kind, None)
        return scorer

    return decorate


def run_rules(chain: Sequence[Rule], ctx: Context) -> ScoreResult:
    """The verdict of the first rule in `chain` that does not pass."""
    for rule in chain:
        outcome = rule.check(ctx)
        if outcome.status != "pass":
            correct = outcome.status == "match"
            method = rule.name if correct else (outcome.method or rule.name)
            return ScoreResult(
                correct=correct,
                verdict="correct" if correct else "incorrect",
                method=method,
                extracted=ctx.extraction.answer,
                detail=outcome.detail,
            )
    return ScoreResult(
        correct=False,
        verdict="incorrect",
        method="no_match",
        extracted=ctx.extraction.answer,
        detail="no rule found the answer",
    )


# Verdicts about the response as a whole: another accepted spelling cannot change them.
_RESPONSE_VERDICTS = frozenset(
    {"empty_response", "echo", "hedged", "distractor", "wrong_script", "wrong_format"}
)


def score_variants(chain: RuleChain, response: str, key: AnswerKey) -> ScoreResult:
    """The verdict for the expected answer, or for the first accepted variant that is right."""
    ctx = Context(response, key)
    result = run_rules(chain(ctx), ctx)
    if result.correct or not key.accepted or result.method in _RESPONSE_VERDICTS:
        return result
    vetoed: ScoreResult | None = None
    for variant in key.accepted:
        others = tuple(a for a in key.answers if a != variant)
        variant_ctx = Context(response, replace(key, answer=variant, accepted=others))
        variant_result = run_rules(chain(variant_ctx), variant_ctx)
        if variant_result.correct:
            return variant_result
        if vetoed is None and variant_result.method in _RESPONSE_VERDICTS:
            vetoed = variant_result
    # A decoy or hedge found through an accepted form names why, where "no_match" would not.
    return vetoed if vetoed is not None and result.method == "no_match" else result


def _language_chain(ctx: Context) -> Sequence[Rule]:
    return LANGUAGE_RULES


def _exact_chain(ctx: Context) -> Sequence[Rule]:
    return EXACT_RULES


def _numeric_chain(ctx: Context) -> Sequence[Rule]:
    # An answer that is not a number ("7:45", a name) is compared as the exact scorer would.
    return NUMERIC_RULES if _expected_number(ctx) is not None else EXACT_RULES


@register_scorer("language", rules=_language_chain)
def score_language(response: str, key: AnswerKey) -> ScoreResult:
    """Greek-aware scoring: folding, transliteration, number words, dates, token coverage."""
    return score_variants(_language_chain, response, key)


@register_scorer("numeric", rules=_numeric_chain)
def score_numeric(response: str, key: AnswerKey) -> ScoreResult:
    """Number comparison: the boxed answer first, then a marked answer, then the last number."""
    return score_variants(_numeric_chain, response, key)


@register_scorer("exact", rules=_exact_chain)
def score_exact(response: str, key: AnswerKey) -> ScoreResult:
    """Folded exact comparison, the regex, and whole-word containment for one-word answers."""
    return score_variants(_exact_chain, response, key)


def _scorer(kind: str) -> Scorer:
    return SCORER_KINDS.lookup(kind)


def score_text(
    response: str,
    answer: str,
    *,
    answer_regex: str | None = None,
    kind: str = "language",
    accepted_answers: Sequence[str] = (),
    distractors: Sequence[str] = (),
    question: str | None = None,
    answer_script: str | None = None,
    answer_format: str | None = None,
    truncated: bool = False,
) -> ScoreResult:
    """Score one response against the expected answer with the scorer `kind`."""
    key = AnswerKey(
        answer, answer_regex, tuple(accepted_answers), tuple(distractors), question,
        answer_script, answer_format,
    )  # fmt: skip
    return score_key(response, key, kind, truncated=truncated)


def score_key(
    response: str, key: AnswerKey, kind: str = "language", *, truncated: bool = False
) -> ScoreResult:
    """Score one response against a full answer key with the scorer `kind`.

    `truncated` says the reply was cut off (finish reason `length`, or cut to
    `max_response_chars`): it is then judged only on an answer it committed to before the
    cut (a marker, a box, bold, a first-line answer), never on a number of its working.
    """
    scorer = _scorer(kind)
    if truncated:
        extraction = extract_answer(response)
        if extraction.rule not in EXPLICIT_RULES:
            return ScoreResult(
                correct=False,
                verdict="incorrect",
                method="truncated",
                extracted=extraction.answer,
                detail="the reply was cut off before it committed to an answer",
            )
    return scorer(response, key)


def _span_note(ctx: Context) -> str:
    """Where the reply commits to its answer, for `explain_text`."""
    extraction = ctx.extraction
    if extraction.answer is None:
        return "the reply has no words"
    how = {
        "marker": "the text after an answer marker",
        "boxed": "the last \\boxed{}",
        "bold": "the last bold span",
        "first_line": "a short first line that the rest explains",
        "last_line": "the last line"
        + (", commentary: its last sentence" if ctx.searches_raw else ""),
    }[extraction.rule]
    note = f"the reply commits to {ctx.head!r} ({how}"
    if ctx.span.strip() != ctx.head.strip():
        note += f"; reasons and asides set apart: {ctx.span!r}"
    if ctx.conclusion_head:
        note += f"; its conclusion: {ctx.conclusion_head!r}"
    return note + ")"


def explain_text(
    response: str, key: AnswerKey | str, *, kind: str = "language", truncated: bool = False
) -> list[RuleTrace]:
    """Run every rule of the scorer `kind` and say for each whether it fired and why.

    The first entry, `committed_span`, names the answer the reply commits to and how it was
    found; the last, `verdict`, is what `score_key` returns: the first rule that fired decides.
    """
    key = AnswerKey(key) if isinstance(key, str) else key
    result = score_key(response, key, kind, truncated=truncated)
    chain = _RULE_CHAINS.get(kind)
    ctx = Context(response, key)
    traces: list[RuleTrace] = []
    if chain is not None:
        traces.append(
            RuleTrace("committed_span", ctx.extraction.answer is not None, _span_note(ctx))
        )
        if result.method == "truncated":
            traces.append(RuleTrace("truncated", True, result.detail))
        for rule in chain(ctx):
            outcome = rule.check(ctx)
            detail = outcome.detail
            if outcome.status == "veto":
                detail = f"rules the answer out ({outcome.method or rule.name}): {detail}"
            traces.append(RuleTrace(rule.name, outcome.status != "pass", detail))
    verdict = "correct" if result.correct else "incorrect"
    summary = f"{verdict} by {result.method}: {result.detail}"
    if chain is not None:
        summary += f" [committed answer {ctx.head!r}]"
    traces.append(RuleTrace("verdict", result.correct, summary))
    return traces
