"""The rules shared by every scorer kind and those of the `language` scorer."""

from __future__ import annotations

import re
import unicodedata

from llm_eval.scoring.commitment import (
    alternative_number,
    has_hedge_cue,
)
from llm_eval.scoring.context import (
    Context,
    Outcome,
    aside_candidate,
    doubtful,
    matched,
    near_answer,
    passed,
    search,
    vetoed,
)
from llm_eval.scoring.cues import conditions
from llm_eval.scoring.extraction import (
    boxed_spans,
)
from llm_eval.scoring.form_demands import asks_for_digits
from llm_eval.scoring.matchers import (
    RegexTimeout,
    answer_content,
    answer_date,
    answer_number,
    clause_polarities,
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
)
from llm_eval.scoring.normalize import (
    fold_text,
    has_greek,
    has_latin,
    plain,
    tokens,
)
from llm_eval.scoring.numeric import stated_reading
from llm_eval.scoring.numeric_rules import expected_number, read_values
from llm_eval.scoring.passage import passage_text

# --- Rules shared by every kind -----------------------------------------------------------


def empty_response_rule(ctx: Context) -> Outcome:
    if ctx.extraction.answer is None:
        return vetoed("the response has no words", "empty_response")
    return passed(f"final answer {ctx.extracted!r} found by rule {ctx.extraction.rule!r}")


def exact_rule(ctx: Context) -> Outcome:
    if exact_match(ctx.extracted, ctx.answer):
        return matched(f"{fold_text(ctx.extracted)!r} equals the expected answer")
    return passed(f"{fold_text(ctx.extracted)!r} != {fold_text(ctx.answer)!r}")


def regex_rule(ctx: Context, *, raw: bool = True) -> Outcome:
    if not ctx.answer_regex:
        return passed("no answer_regex")
    candidates = regex_candidates(ctx.extracted, ctx.extraction.text if raw else None)
    try:
        hit = regex_match(ctx.answer_regex, candidates)
    except RegexTimeout as exc:
        return passed(str(exc))
    if hit is not None:
        return matched(f"answer_regex {ctx.answer_regex!r} matches {hit[:80]!r}")
    return passed(f"answer_regex {ctx.answer_regex!r} matches nothing")


def yes_no_rule(ctx: Context) -> Outcome:
    """A yes/no answer is read from the first yes/no word of the answer (or the first line)."""
    expected = ctx.answer_polarity
    if expected is None:
        return passed("the expected answer is not yes/no")
    for where, text in (("extracted answer", ctx.extracted), ("first line", _first_line(ctx))):
        given = first_polarity(text)
        if given is None:
            continue
        # "όχι, δεν είναι ναι" is a no that quotes a yes, not a list: only "ή"/"or" or
        # "yes and no" hedge.
        polar = {polarity(word) for word in tokens(text)} - {None}
        if (len(polar) > 1 and is_hedged(text, near=_is_polar, lists=False)) or says_both(text):
            return vetoed(f"the {where} hedges between yes and no: {text!r}", "hedged")
        if len(set(clause_polarities(text))) > 1 and (has_hedge_cue(text) or conditions(text)):
            # «Μάλλον ναι, αλλά μπορεί και όχι»: both, each hedged or under a condition.
            return vetoed(f"the {where} offers both yes and no: {text!r}", "hedged")
        word = "yes" if given else "no"
        if has_greek(ctx.answer) and english_polar_word(text):
            # "Yes" for «ναι» is the answer in another language: unsure, unless the task
            # demands Greek script.
            if ctx.key.answer_script == "greek":
                return vetoed(f"the task demands Greek; the {where} says {word}", "wrong_script")
            return doubtful(
                "other_language", f"the {where} answers in English ({word}) for {ctx.answer!r}"
            )
        if _qualified(text):
            return vetoed(
                f"the {where} says {word} only under a condition: {text!r}", "conditional"
            )
        if given == expected:
            return matched(f"the {where} says {word}")
        return vetoed(f"the {where} says {word}")
    return passed("no yes/no word in the final answer or the first line")


def _qualified(text: str) -> bool:
    """Class `conditional`: a yes or no that a condition follows at once ("yes, unless he is
    new", «Ναι, εκτός αν ήρθε σήμερα») commits to neither; a condition later in the reply
    («όχι, αλλά αν θέλει…») qualifies something else."""
    for match in conditions(text):
        before = _LAST_WORD_RE.search(text[: match.start()])
        if before is not None and any(polarity(w) is not None for w in tokens(before.group(1))):
            return True
    return False


_LAST_WORD_RE = re.compile(r"([^\W_]+)[\s,]*$")


def _is_polar(word: str) -> bool:
    return polarity(word) is not None


def _first_line(ctx: Context) -> str:
    return ctx.raw_lines[0] if ctx.raw_lines else ""


def containment_rule(ctx: Context, *, single_word_only: bool = False) -> Outcome:
    if ctx.answer_polarity is not None:
        return passed("yes/no answers are decided by the yes_no rule")
    if single_word_only and len(ctx.answer_tokens) != 1:
        return passed("containment applies to single-word answers only")
    return search(
        ctx,
        lambda text: offers(
            ctx.answer_tokens, text, transliterate=False, negative_question=not ctx.negation
        ),
        "the expected answer as whole words",
        near_answer(ctx, transliterate=False),
    )


def closing_boxes_rule(ctx: Context) -> Outcome:
    """Boxes with different contents closing a response list alternatives: no commitment."""
    if ctx.extraction.rule != "boxed":
        return passed("the final answer is not a box")
    paragraph = re.split(r"\n\s*\n", ctx.extraction.text.rstrip())[-1]
    boxes = [content for _, content in boxed_spans(paragraph)]
    contents = {fold_text(content) for content in boxes}
    # "\\boxed{\\frac{1}{2}} = \\boxed{0.5}" writes one value twice.
    values = {stated_reading(content) for content in boxes}
    if len(contents) > 1 and (None in values or len({min(v) for v in values if v}) > 1):
        return vetoed(f"the closing boxes list alternatives: {sorted(contents)}", "hedged")
    return passed("one boxed answer")


def alternatives_rule(ctx: Context) -> Outcome:
    """Around the committed answer, a cue ("or", "possibly", "ίσως") offering another one."""
    context = ctx.extraction.context
    if not context or ctx.answer_polarity is not None:
        return passed("no answer line to look around")
    if not has_hedge_cue(context):
        return passed(f"no word offering another answer in {context.strip()[:80]!r}")
    # A number written in digits; "Mia" reads as the Greeklish word for one, not a number.
    expected = expected_number(ctx) if any(c.isdigit() for c in ctx.answer) else None
    if expected is not None:
        committed = read_values(ctx.head, has_greek(context), first=True)
        other = alternative_number(context, committed) if committed else None
    else:
        other = aside_candidate(ctx, context, ctx.head)
    if other is not None:
        return vetoed(f"{context.strip()!r} also offers {other!r} as the answer", "hedged")
    return passed(f"nothing else offered as the answer in {context.strip()[:80]!r}")


def answer_format_rule(ctx: Context) -> Outcome:
    """The task's format demands: Greek script, digits, or the answer exactly as written."""
    key = ctx.key
    if not key.answer_format and key.answer_script != "greek":
        return passed("no format demand")
    if key.answer_format == "verbatim":
        text = ctx.extracted
        if _verbatim(text) in {_verbatim(answer) for answer in key.answers}:
            return matched(f"{text!r} is written exactly as demanded")
        return vetoed(f"{text!r} is not written exactly as {key.answer!r}", "not_verbatim")
    text = ctx.head
    if key.answer_script == "greek" and has_latin(text) and not has_greek(text):
        return vetoed(f"the task demands Greek script; {text!r} is Latin", "wrong_script")
    if key.answer_format == "digits" and not any(c.isdigit() for c in text):
        expected = expected_number(ctx)
        said = read_values(text, has_greek(text), first=True)
        if key.question and not asks_for_digits(key.question) and expected in (said or ()):
            # The task file wants digits, but the model was never told: «Δέκα ευρώ» for 10.
            return doubtful(
                "form_demand",
                f"{text!r} writes the key in words; the question never asks for digits",
            )
        return vetoed(f"the task demands digits; {text!r} has none", "wrong_format")
    return passed("no format demand, or the final answer meets it")


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


def echo_rule(ctx: Context) -> Outcome:
    """A response that copies the passage back, without a final answer of its own, is wrong."""
    question = ctx.key.question
    if ctx.answer_polarity is not None:
        return passed("a yes/no answer is read from its first yes/no word")
    if not question or len(passage_words(question)) < _ECHO_MIN_WORDS:
        return passed("no passage long enough to be echoed")
    if _has_separate_answer(ctx):
        return passed(f"the response gives a separate final answer {ctx.extracted!r}")
    share = echo_share(ctx.extraction.text, question)
    if share >= _ECHO_SHARE:
        return vetoed(
            f"the response copies {share:.0%} of the passage and gives no separate final answer",
            "echo",
        )
    return passed(f"the response copies {share:.0%} of the passage")


def _has_separate_answer(ctx: Context) -> bool:
    if _closing_line_copied(ctx):
        return False  # "Ντίνος: κλασικος Φωτης" is the passage's chat line, not a marker
    words = len(content_tokens(ctx.extracted))
    if ctx.extraction.rule in ("marker", "boxed", "bold"):
        return words <= _SEPARATE_ANSWER_WORDS
    return ctx.extraction.rule == "last_line" and len(ctx.raw_lines) > 1 and words <= 3


def _closing_line_copied(ctx: Context) -> bool:
    """Whether the reply's last line is a whole line of the passage, copied with it (a
    sentence of the passage restated on a line of its own is an answer, not a copy)."""
    if not ctx.raw_lines:
        return False
    said = _plain_words(ctx.raw_lines[-1])
    passage = passage_text(ctx.key.question or "").splitlines()
    return len(passage) > 1 and any(said == _plain_words(line) for line in passage)


def _plain_words(text: str) -> list[str]:
    return [plain(t) for t in tokens(text)]


def number_words_rule(ctx: Context) -> Outcome:
    expected = answer_number(ctx.answer)
    if expected is None or ctx.answer_polarity is not None:
        return passed("the expected answer is not a number")
    greek = has_greek(ctx.extraction.text)
    return search(ctx, lambda text: expected in numbers_in(text, greek), f"the number {expected}")


def date_rule(ctx: Context) -> Outcome:
    expected = answer_date(ctx.answer)
    if expected is None:
        return passed("the expected answer is not a date")
    return search(
        ctx,
        lambda text: any(same_date(expected, found) for found in dates_in(text)),
        f"the date {expected[0]}/{expected[1]}",
    )


def transliteration_rule(ctx: Context) -> Outcome:
    if ctx.answer_polarity is not None:
        return passed("yes/no answers are decided by the yes_no rule")
    if not ctx.transliterates:
        return passed("the task demands Greek script: no transliteration")
    return search(
        ctx,
        lambda text: offers(ctx.answer_tokens, text, transliterate=True),
        "the expected answer, with Greek/Greeklish spellings allowed,",
        near_answer(ctx, transliterate=True),
    )


def token_coverage_rule(ctx: Context) -> Outcome:
    needed = answer_content(ctx.answer)
    if ctx.answer_polarity is not None or not needed:
        return passed("nothing to cover")
    return search(
        ctx,
        lambda text: covers(needed, offered_tokens(text), transliterate=ctx.transliterates),
        f"every content word of {needed}",
        near_answer(ctx, transliterate=True),
    )


_SLIP_MIN_LETTERS = 6
"""Answer words this long may carry a one-letter slip; shorter ones are too close to others."""


def near_spelling_rule(ctx: Context) -> Outcome:
    """A one-letter slip in a long answer word ("Θεσαλονίκη"), when nothing else is that close.

    The slipped word must not be a word of the passage (Μαρία for Μαρίνα is another name),
    nor one letter from any other word of it or from a decoy.
    """
    needed = answer_content(ctx.answer)
    if ctx.answer_polarity is not None or len(needed) != 1:
        return passed("a slip is allowed in one-word answers only")
    if not ctx.key.question:
        return passed("without the passage a slip cannot be told from another of its words")
    target = plain(needed[0])
    if len(target) < _SLIP_MIN_LETTERS or not target.isalpha():
        return passed(f"{ctx.answer!r} is too short for a slip to be told from another word")
    passage = {plain(w) for w in tokens(ctx.key.question)} - {target}
    passage |= {plain(w) for d in ctx.key.distractors for w in tokens(d)}
    head = ctx.head if ctx.extraction.rule == "first_line" else ctx.conclusion_head or ctx.head
    for word in map(plain, tokens(head)):
        # A change of the last letter is another form of the word (Λονδίνου, κίνησης,
        # δεύτερη), which the other rules judge; a slip is inside the word.
        if _ending_change(word, target) or not one_edit_apart(word, target):
            continue
        if word in passage or any(one_edit_apart(word, other) for other in passage):
            return passed(f"{word!r} is one letter from {target!r} but also from the passage")
        return matched(f"{word!r} is {target!r} with one letter slipped")
    return passed(f"no word of {head!r} is one letter from {target!r}")


def _ending_change(word: str, target: str) -> bool:
    """The two words differ only in their last letter: an inflection, not a slip."""
    return word[:-1] == target[:-1] or word[:-1] == target or word == target[:-1]
