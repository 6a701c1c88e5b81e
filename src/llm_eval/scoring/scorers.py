"""The scorer kinds (`language`, `numeric`, `exact`), their rule chains and the registry.

A built-in scorer is an ordered chain of rules (SPEC 9): extract the final answer, then
exact normalised comparison, then `answer_regex`, then normalised containment on word
boundaries; `language` adds number words, dates, transliteration and token coverage. Each
rule either credits the answer (match), rules it out (veto), says the rules cannot settle
the reply (unsure, with its class: `unsure.py`) or passes to the next; the first rule that
does not pass decides, and its name becomes the verdict's `method`. The last rule,
`undecided`, gives the verdict when no rule found the key: sure wrong for a decoy, a number
or a date, unsure for an open answer or another language.

Before the chain, a closing line that corrects itself ("46, wait, actually 48") is judged
on what follows its last correction cue (`cues.py`); after it, a credited answer under a
hedge marker («Περίπου 530», "my best guess is 48", «Μάλλον ναι»: `hedges.py`) or beside
another one under a condition («…, αλλά αν …, Πάτρα») is not credited.

The committed answer. Rules judge the head of the answer span (`commitment.py`): the
first clause that offers something, before its reasons and asides, or the head of its
conclusion. A decoy named in a reason, a negated clause or a "changed from" clause does not
veto; an answer named only there is not credited. The rest of the response is searched only
when the model gave no answer span of its own (no marker, box, bold or first-line answer)
and its last line is commentary rather than an answer.

Hedging. A segment that offers the answer as one alternative among others ("Μαρία ή
Μαρίνα", "either Maria or Marina", "Maria/Marina", a bare list "Μαρία, Μαρίνα") never earns
credit (`hedged`), and neither does an answer beside an aside that offers another
candidate ("412 (or possibly 413)", «Τρίτη, ίσως και Τετάρτη»), in every scorer. A
committed answer that lists the task's candidates ("Kate, Leo or Mia", "Answer: 50, 72, 98")
is never credited (`candidates.py`).

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
from collections.abc import Callable, Sequence
from dataclasses import replace

from llm_eval.registry import Registry
from llm_eval.scoring.candidates import candidate_list_rule
from llm_eval.scoring.commitment import states_result
from llm_eval.scoring.context import Context, Rule
from llm_eval.scoring.cues import correction_tail, unsettled_correction, weak_correction_tail
from llm_eval.scoring.extraction import (
    EXPLICIT_RULES,
    extract_answer,
)
from llm_eval.scoring.form_demands import form_doubt
from llm_eval.scoring.hedges import hedge_doubt
from llm_eval.scoring.language_rules import (
    alternatives_rule,
    answer_format_rule,
    closing_boxes_rule,
    containment_rule,
    date_rule,
    echo_rule,
    empty_response_rule,
    exact_rule,
    near_spelling_rule,
    number_words_rule,
    regex_rule,
    token_coverage_rule,
    transliteration_rule,
    yes_no_rule,
)
from llm_eval.scoring.matchers import polarity
from llm_eval.scoring.normalize import fold
from llm_eval.scoring.numeric_rules import (
    expected_number,
    numeric_boxed_rule,
    numeric_last_rule,
    numeric_marker_rule,
    numeric_words_rule,
)
from llm_eval.scoring.result import AnswerKey, RuleTrace, ScoreResult
from llm_eval.scoring.unsure import UNSURE_REASONS
from llm_eval.scoring.verdict_rules import (
    clock_time_rule,
    compound_duration_rule,
    condition_doubt,
    form_demand_rule,
    name_form_rule,
    ordinal_rule,
    question_doubt,
    range_rule,
    several_answers_rule,
    stem_coverage_rule,
    undecided_rule,
)

Scorer = Callable[[str, AnswerKey], ScoreResult]
"""A scorer: `(response, answer key) -> verdict`; registered with `@register_scorer`."""

# --- Chains and registry ------------------------------------------------------------------

# Vetoes of the reply as a whole (nothing said, several answers, a range, a list, a broken
# format), first in every chain: no later rule may credit such a reply.
REPLY_VETOES: tuple[Rule, ...] = (
    Rule("empty_response", empty_response_rule),
    Rule("several_answers", several_answers_rule),
    Rule("candidate_list", candidate_list_rule),
    Rule("range", range_rule),
    Rule("compound_duration", compound_duration_rule),
    Rule("boxed_alternatives", closing_boxes_rule),
    Rule("alternatives", alternatives_rule),
    Rule("answer_format", answer_format_rule),
)
LANGUAGE_RULES: tuple[Rule, ...] = (
    *REPLY_VETOES,
    Rule("form_demand", form_demand_rule),
    Rule("echo", echo_rule),
    Rule("exact", exact_rule),
    Rule("regex", regex_rule),
    Rule("yes_no", yes_no_rule),
    Rule("ordinal", ordinal_rule),
    Rule("containment", containment_rule),
    Rule("number_words", number_words_rule),
    Rule("date", date_rule),
    Rule("clock_time", clock_time_rule),
    Rule("transliteration", transliteration_rule),
    Rule("token_coverage", token_coverage_rule),
    Rule("near_spelling", near_spelling_rule),
    Rule("name_form", name_form_rule),
    Rule("stem_coverage", stem_coverage_rule),
    Rule("undecided", undecided_rule),
)
EXACT_RULES: tuple[Rule, ...] = (
    *REPLY_VETOES,
    Rule("form_demand", form_demand_rule),
    Rule("exact", exact_rule),
    Rule("regex", regex_rule),
    Rule("yes_no", yes_no_rule),
    Rule("containment", lambda ctx: containment_rule(ctx, single_word_only=True)),
    Rule("clock_time", clock_time_rule),
    Rule("near_spelling", near_spelling_rule),
    Rule("name_form", name_form_rule),
    Rule("undecided", undecided_rule),
)
NUMERIC_RULES: tuple[Rule, ...] = (
    *REPLY_VETOES,
    Rule("exact", exact_rule),
    # With a box in the response the box is the answer: the regex may not rescue it from
    # the raw text.
    Rule("regex", lambda ctx: regex_rule(ctx, raw=ctx.extraction.boxed is None)),
    Rule("numeric_boxed", numeric_boxed_rule),
    Rule("numeric_marker", numeric_marker_rule),
    Rule("numeric_last", numeric_last_rule),
    Rule("number_words", numeric_words_rule),
    Rule("undecided", undecided_rule),
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
        if outcome.status == "unsure":
            return ScoreResult.unsure(
                outcome.reason or rule.name, method=rule.name, extracted=ctx.extraction.answer,
                detail=outcome.detail,
            )  # fmt: skip
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
    {"empty_response", "echo", "hedged", "distractor", "wrong_script", "wrong_format",
     "several_answers", "range", "wrong_form"}
)  # fmt: skip


def score_variants(chain: RuleChain, response: str, key: AnswerKey) -> ScoreResult:
    """The verdict for the expected answer, or for the first accepted variant that is right.

    A closing line that corrects itself ("46, wait, actually 48") is judged on what follows
    its last correction cue; a credited answer under a hedge marker (`hedge_doubt`) or
    offered beside another one under a condition (`condition_doubt`) is not credited.
    """
    # The extraction is cached: the rules below read the same one.
    extraction = extract_answer(response)
    ctx = Context(response, key)
    echoed = _echo_veto(chain(ctx), ctx)
    if echoed is not None:
        return echoed
    broken_no = not _yes_no_key(key)
    tail = correction_tail(extraction.text, broken_no=broken_no) or correction_tail(
        extraction.context.split("\n", 1)[0], broken_no=broken_no
    )
    if tail is not None:
        return _corrected(chain, tail, key)
    if unsettled_correction(extraction.text, extraction.answer):
        return ScoreResult.unsure(
            "self_correction", method="self_correction", extracted=extraction.answer,
            detail="a correction cue takes the answer back and no corrected answer follows",
        )  # fmt: skip
    weak = weak_correction_tail(extract_answer(response).text)
    if weak is not None and score_variants(chain, weak, key).correct:
        return ScoreResult.unsure(
            "self_correction", method="self_correction", extracted=weak,
            detail=f"the reply may correct itself to {weak!r}, or offer it beside another",
        )  # fmt: skip
    result = run_rules(chain(ctx), ctx)
    if result.correct:
        return _unless_doubted(ctx, result)
    if not key.accepted or result.method in _RESPONSE_VERDICTS:
        return result
    vetoed: ScoreResult | None = None
    for variant in key.accepted:
        others = tuple(a for a in key.answers if a != variant)
        variant_ctx = Context(response, replace(key, answer=variant, accepted=others))
        variant_result = run_rules(chain(variant_ctx), variant_ctx)
        if variant_result.correct:
            return _unless_doubted(variant_ctx, variant_result)
        if vetoed is None and variant_result.method in _RESPONSE_VERDICTS:
            vetoed = variant_result
    # A decoy or hedge found through an accepted form names why, where "no_match" would not.
    return vetoed if vetoed is not None and result.method == "no_match" else result


def _echo_veto(rules: Sequence[Rule], ctx: Context) -> ScoreResult | None:
    """The chain's echo verdict, read before any correction cue: a cue the reply copies from
    the passage ("change of plan: …") is the passage's, not a correction of the reply's."""
    echo = [rule for rule in rules if rule.name == "echo"]
    if echo and echo[0].check(ctx).status == "veto":
        return run_rules(echo, ctx)
    return None


_CLAUSE_END_RE = re.compile(r"[·;]\s*")


def _corrected(chain: RuleChain, tail: str, key: AnswerKey) -> ScoreResult:
    """The verdict on what follows a correction cue. A tail of clauses whose last one ends on
    a value after a copula («όχι, η 13 Μαρτίου είναι Παρασκευή· η Τετάρτη είναι 18/03»)
    commits to that last value: credited when it is the key; when the first clause holds
    the key and the last states another value, the rules cannot tell reason from answer."""
    corrected = score_variants(chain, tail, key)
    note = f"after the correction cue the reply commits to {tail!r}: {corrected.detail}"
    last = _CLAUSE_END_RE.split(tail.strip(" .…"))[-1]
    if last != tail.strip(" .…") and states_result(last):
        closing = score_variants(chain, last, key)
        if closing.verdict != corrected.verdict and closing.verdict != "unsure":
            if closing.correct:
                note = f"after the correction cue the reply's last clause states {last!r}"
                return closing.model_copy(update={"method": "self_correction", "detail": note})
            return ScoreResult.unsure(
                "self_correction", method="self_correction", extracted=tail,
                detail=f"after the correction cue {tail!r} ends on another value: {last!r}",
            )  # fmt: skip
    return corrected.model_copy(update={"method": "self_correction", "detail": note})


def _yes_no_key(key: AnswerKey) -> bool:
    """Whether the key is one yes/no word («ναι», "no")."""
    words = key.answer.split()
    return len(words) == 1 and polarity(fold(words[0]).strip(".!;«»\"'")) is not None


def _unless_doubted(ctx: Context, result: ScoreResult) -> ScoreResult:
    """A credited verdict, unless a hedge marker qualifies the committed answer
    (`hedges.py`) or a condition offers another answer beside it."""
    doubts = (
        ("hedge", hedge_doubt(ctx)),
        ("conditional", condition_doubt(ctx)),
        ("form_demand", form_doubt(ctx)),
        ("question", question_doubt(ctx)),
    )
    for method, doubt in doubts:
        if doubt is None:
            continue
        if doubt.status == "unsure":
            return ScoreResult.unsure(
                doubt.reason or method, method=method, extracted=result.extracted,
                detail=doubt.detail,
            )  # fmt: skip
        return ScoreResult(
            correct=False, verdict="incorrect", method=doubt.method or method,
            extracted=result.extracted, detail=doubt.detail,
        )  # fmt: skip
    return result


def _language_chain(ctx: Context) -> Sequence[Rule]:
    return LANGUAGE_RULES


def _exact_chain(ctx: Context) -> Sequence[Rule]:
    return EXACT_RULES


def _numeric_chain(ctx: Context) -> Sequence[Rule]:
    # An answer that is not a number ("7:45", a name) is compared as the exact scorer would.
    return NUMERIC_RULES if expected_number(ctx) is not None else EXACT_RULES


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
        finished = _before_cut_note(response)
        if finished is not None:
            result = scorer(finished, key)
            note = f"the cut fell in a closing note; the reply before it: {result.detail}"
            return result.model_copy(update={"detail": note})
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


_NOTE_RE = re.compile(
    r"^\W*(?:σημειωση|σημ\.|παρατηρηση|υγ|υ\.γ\.|note|n\.b\.|p\.s\.|ps|remark"
    r"|αναλυτικα|εξηγηση|αιτιολογηση|explanation|reasoning|details)\b",
    re.I,
)


def _before_cut_note(response: str) -> str | None:
    """The reply before its last paragraph, when the cut fell in that paragraph and it is a
    note or an explanation («Σημείωση: …», «Αναλυτικά: …», "Note: …") after a finished answer
    line: the answer came before the
    cut, so it is judged as a finished reply."""
    body, gap, last = response.rstrip().rpartition("\n\n")
    if not gap or not body.strip() or _NOTE_RE.match(fold(last.strip())) is None:
        return None
    closing = body.rstrip()
    return closing if closing[-1:] in ".!)»*" or closing[-1:].isdigit() else None


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
        if result.method == "self_correction":
            traces.append(RuleTrace("self_correction", True, result.detail))
        for rule in chain(ctx):
            outcome = rule.check(ctx)
            detail = outcome.detail
            if outcome.status == "veto":
                detail = f"rules the answer out ({outcome.method or rule.name}): {detail}"
            elif outcome.status == "unsure":
                detail = f"cannot settle the reply ({outcome.reason}): {detail}"
            traces.append(RuleTrace(rule.name, outcome.status != "pass", detail))
    summary = f"{result.verdict} by {result.method}: {result.detail}"
    if result.verdict == "unsure" and result.unsure_reason:
        meaning = UNSURE_REASONS.get(result.unsure_reason, "")
        summary = f"unsure ({result.unsure_reason}: {meaning}) by {result.method}: {result.detail}"
    if chain is not None:
        summary += f" [committed answer {ctx.head!r}]"
    traces.append(RuleTrace("verdict", result.correct, summary))
    return traces
