"""Replies that explain themselves, hedge, get cut off or check their work.

`explained_cases.jsonl` holds 420 replies written by graders who never saw the scorer, each
labelled under the grading policies of docs/scoring.md and labelled again, blind
to those labels, by other graders (the two labellings agreed on all 420). The scorer must
agree with the labels on at least `FLOOR` of them, credit at least `MIN_RECALL` of the right
answers and at most `MAX_FALSE_CREDIT` of the wrong ones, and hold for each failure class on
its own.

    uv run python -m tests.support.agreement     # the figures, and every miss
"""

from __future__ import annotations

from collections import Counter

import pytest

from llm_eval.scoring import AnswerKey, explain_text, score_key, score_text
from tests.support.agreement import EXPLAINED, Agreement, load, realistic_agreement

FLOOR = 0.98
MIN_RECALL = 0.97
MAX_FALSE_CREDIT = 0.01

# The failure classes a ranking is biased by, and the shapes of the set that show each.
CLASSES = {
    "right_answer_with_a_reason_naming_a_decoy": (
        "reason_names_distractor", "negated_distractor", "verb_negation",
        "changed_from_clause", "amount_breakdown", "answer_then_reason",
        "conclusion_after_working",
    ),
    "hedges_in_both_scorers": ("hedge_right_first", "either_or", "candidate_list", "greek_hedge"),
    "unfinished_answers": ("truncated_cutoff", "stops_at_step", "truncated_after_answer"),
    "right_answers_in_other_forms": (
        "count_with_share", "scientific_notation", "verification_after_answer",
        "number_words", "typo_in_answer", "final_equals", "units",
    ),
}  # fmt: skip


@pytest.fixture(scope="module")
def agreement() -> Agreement:
    return realistic_agreement(EXPLAINED)


def test_the_set_has_the_shapes_it_measures() -> None:
    cases = load(EXPLAINED)
    greek = [c for c in cases if c["kind"] == "language"]
    math = [c for c in cases if c["shape"] in CLASSES["unfinished_answers"] + (
        "hedge_right_first", "either_or", "candidate_list", "count_with_share",
        "scientific_notation", "verification_after_answer", "final_equals",
    )]  # fmt: skip
    labels = Counter(c["correct"] for c in cases)
    assert len(cases) >= 400 and len({c["id"] for c in cases}) == len(cases)
    assert min(labels.values()) >= 0.45 * len(cases), labels
    assert len(greek) >= 150 and len(math) >= 100


def test_agreement_recall_and_false_credit_on_replies_that_explain_themselves(
    agreement: Agreement,
) -> None:
    misses = [(m["id"], m["shape"], m["method"]) for m in agreement.misses]
    assert agreement.share >= FLOOR, misses
    assert agreement.recall >= MIN_RECALL, misses
    assert agreement.false_credit <= MAX_FALSE_CREDIT, misses


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_each_failure_class_holds_on_its_own(agreement: Agreement, name: str) -> None:
    shapes = CLASSES[name]
    total = sum(agreement.group_totals[s] for s in shapes)
    agreed = sum(agreement.by_group[s] for s in shapes)
    assert total >= 20, f"{name}: only {total} cases"
    assert agreed >= 0.95 * total, [m["id"] for m in agreement.misses if m["shape"] in shapes]


# The same classes on made-up replies, one rule each.
@pytest.mark.parametrize(
    ("response", "answer", "distractors", "correct"),
    [
        ("Απάντηση: Την Τετάρτη — η Τρίτη ήταν η αρχική μέρα που άλλαξε.", "Τετάρτη", ["Τρίτη"], True),  # noqa: E501
        ("Απάντηση: Την Τρίτη — η Τετάρτη ήταν η αρχική μέρα που άλλαξε.", "Τετάρτη", ["Τρίτη"], False),  # noqa: E501
        ("44 € (40 το δωμάτιο + 4 φόρος)", "44", ["40"], True),
        ("Στο Ηράκλειο, όχι πια στα Χανιά όπως έλεγε το πρώτο μήνυμα", "Ηράκλειο", ["Χανιά"], True),
        ("Πάει στη Λαμία· δεν πάει στη Λάρισα.", "Λαμία", ["Λάρισα"], True),
        ("Δεν πάει στη Λάρισα.", "Λάρισα", ["Λαμία"], False),
        ("Όχι την Τρίτη, αλλά την Τετάρτη.", "Τετάρτη", ["Τρίτη"], True),
        ("**Νίκος**\n\nΟ Μπάμπης απλώς έστειλε το μήνυμα, δεν κάνει αυτός τη διανομή.", "Νίκος", ["Μπάμπης"], True),  # noqa: E501
        ("Ο Γιώργος καθυστέρησε. Άρα αυτός που έχασε το τρένο είναι ο Κώστας.", "Γιώργος", ["Κώστας"], False),  # noqa: E501
        # A negation's reach ends at the comma.
        ("Η απάντηση δεν είναι Τετάρτη, είναι Τρίτη.", "Τρίτη", ["Τετάρτη"], True),
        ("Δεν είναι Τρίτη, είναι Τετάρτη.", "Τρίτη", ["Τετάρτη"], False),  # noqa: E501
    ],
)  # fmt: skip
def test_a_decoy_in_a_reason_does_not_veto_the_committed_answer(
    response: str, answer: str, distractors: list[str], correct: bool
) -> None:
    assert score_text(response, answer, distractors=distractors).correct is correct


@pytest.mark.parametrize(
    ("response", "kind"),
    [
        ("Final answer: 412 (or possibly 413)", "numeric"),
        ("the answer is either 412 or 824", "numeric"),
        ("Answer: 412, 411 or 410", "numeric"),
        ("Απάντηση: μάλλον 412 €, ίσως και 413 €", "numeric"),
        ("Απάντηση: 412 (ή ίσως 413)", "language"),
        ("**412** — or 413, if the last one counts.", "numeric"),
    ],
)
def test_a_hedge_is_refused_whichever_alternative_comes_first(response: str, kind: str) -> None:
    result = score_text(response, "412", kind=kind)
    assert not result.correct and result.method == "hedged", result


@pytest.mark.parametrize(
    ("response", "truncated", "correct", "method"),
    [
        ("…so there are 96 candidates, and we still have to remove the ones that", True, False, "truncated"),  # noqa: E501
        ("Final answer: 96\n\nLet me double-check by", True, True, "exact"),
        ("We found 96; the count we want is three times that.", False, False, "unfinished"),
        ("60 cookies is 5 batches. Each batch takes 3 eggs, so multiply the batches by 3.", False, False, "unfinished"),  # noqa: E501
        ("5 batches × 3 eggs = 15 eggs, and 15 + 81 = 96", False, True, "numeric_last"),
    ],
)  # fmt: skip
def test_an_unfinished_reply_is_not_credited_on_a_number_of_its_working(
    response: str, truncated: bool, correct: bool, method: str
) -> None:
    result = score_text(response, "96", kind="numeric", truncated=truncated)
    assert (result.correct, result.method) == (correct, method), result


@pytest.mark.parametrize(
    ("response", "answer", "kind", "question"),
    [
        ("17 pupils (85%)", "17", "numeric", None),
        ("2.4 × 10³ m", "2400", "numeric", None),
        ("300 + 112 = 412. Check: 300 + 112 = 412 ✓", "412", "numeric", None),
        ("412\n\nCheck: 412 − 112 = 300 ✓", "412", "numeric", None),
        ("Red, blue, green: 2 + 3 + 1\n= 6", "6", "numeric", None),
        ("Πληρώνει τριακόσια είκοσι ευρώ.", "320", "language", None),
        ("Απάντηση: Θεσαλονίκη", "Θεσσαλονίκη", "language", "«Μένει στη Θεσσαλονίκη.» Πού μένει;"),
    ],
)
def test_right_answers_in_other_forms_are_credited(
    response: str, answer: str, kind: str, question: str | None
) -> None:
    assert score_text(response, answer, kind=kind, question=question).correct


@pytest.mark.parametrize(
    ("response", "answer", "question"),
    [
        ("Απάντηση: Μαρία", "Μαρίνα", "«Ήρθαν η Μαρία και η Μαρίνα.» Ποια έφερε το κέικ;"),
        ("Απάντηση: Λονδίνου", "Λονδίνο", "«Πετάει για Λονδίνο.» Πού πετάει;"),
        ("Απάντηση: Θεσαλονίκη", "Θεσσαλονίκη", None),
    ],
)
def test_a_slip_is_not_credited_where_it_could_be_another_word(
    response: str, answer: str, question: str | None
) -> None:
    assert not score_text(response, answer, question=question).correct


def test_amount_in_words_is_refused_where_digits_are_demanded() -> None:
    reply = "Εξήντα εννέα ευρώ — ο λογαριασμός των 138 μοιράζεται στα δύο."
    assert score_text(reply, "69", answer_format="digits").method == "wrong_format"
    assert score_text(reply, "69").correct


def test_a_decoy_found_through_an_accepted_form_is_labelled_a_decoy() -> None:
    key = AnswerKey("14/05", accepted=("14 Μαΐου",), distractors=("12 Μαΐου",))
    result = score_key("Απάντηση: 14 Μαΐου ή 12 Μαΐου", key)
    assert not result.correct and result.method in {"hedged", "distractor"}, result


def test_explain_names_the_committed_span_and_the_deciding_rule() -> None:
    key = AnswerKey("Τετάρτη", distractors=("Τρίτη",))
    traces = explain_text("Τετάρτη.\n\nΗ Τρίτη ήταν η αρχική μέρα που άλλαξε.", key)
    assert traces[0].rule == "committed_span" and "'Τετάρτη'" in traces[0].detail
    assert "first line" in traces[0].detail
    assert traces[-1].rule == "verdict" and traces[-1].matched
    cut = explain_text("…so far 96, and we still", AnswerKey("96"), kind="numeric", truncated=True)
    assert [t.rule for t in cut[:2]] == ["committed_span", "truncated"]
    assert "incorrect by truncated" in cut[-1].detail


def test_a_courtesy_opening_is_not_a_first_line_answer() -> None:
    from llm_eval.scoring.commitment import first_line_answer

    explained = "\nΗ συνάντηση είναι την Τρίτη στις δέκα το πρωί."
    assert first_line_answer("Εντάξει." + explained) is None
    assert first_line_answer("Ας δούμε." + explained) is None
    assert first_line_answer("Τρίτη." + explained) == "Τρίτη."
