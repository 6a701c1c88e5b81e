"""The three verdicts on the reply classes a rule cannot always settle.

`verdict_classes.jsonl` holds replies of the classes named in docs/scoring.md
(self-corrections, appositives, decoys inside descriptions, headings over a bold answer,
ordinals, boxed products, reasons after a number, inflected names, conditions, ranges and
tolerances, several answer lines, gaming, other languages, paraphrases, parsed values),
each labelled with the grader's verdict (`correct`) and the verdict the scorer should give
(`expected_verdict`), written before the rule for its class.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from llm_eval.scoring import UNSURE_REASONS, score_text
from tests.support.agreement import CLASSES, load, realistic_agreement, verdict_misses

SHAPES_WITH_AT_LEAST_THREE_CASES = (
    "self_correction", "appositive", "decoy_in_description", "heading_bold", "ordinal",
    "boxed_arithmetic", "reason_after_number", "inflected_name", "conditional", "range",
    "several_answers", "gaming", "other_language", "paraphrase", "parsed_value",
)  # fmt: skip


def test_the_set_covers_every_class_with_labels_before_rules() -> None:
    cases = load(CLASSES)
    shapes = Counter(case["shape"] for case in cases)
    assert len(cases) >= 60 and len({case["id"] for case in cases}) == len(cases)
    assert all(shapes[shape] >= 3 for shape in SHAPES_WITH_AT_LEAST_THREE_CASES), shapes
    verdicts = Counter(case["expected_verdict"] for case in cases)
    assert set(verdicts) == {"correct", "incorrect", "unsure"}, verdicts


def test_every_case_gets_its_expected_verdict() -> None:
    misses = verdict_misses()
    assert not misses, [(m["id"], m["expected_verdict"], m["got"], m["method"]) for m in misses]


def test_a_sure_verdict_is_never_against_the_grader_and_no_gaming_reply_is_credited() -> None:
    agreement = realistic_agreement(CLASSES)
    assert agreement.share == 1.0, [(m["id"], m["method"]) for m in agreement.misses]
    assert agreement.false_credit == 0.0
    gaming = agreement.by_shape["gaming"]
    assert gaming.rows >= 5 and gaming.wrong_credited == 0


@pytest.mark.parametrize(
    ("response", "answer", "kind", "distractors", "accepted", "reason"),
    [
        ("Tuesday.", "Τρίτη", "language", (), (), "other_language"),
        ("Yes, it opens at 5.", "ναι", "language", (), (), "other_language"),
        ("Του Χάρη.", "Χάρης", "language", ("Χάρη",), (), "unlisted_form"),
        ("Βόλο, αλλά αν μετράς και τη δουλειά, Πάτρα.", "Βόλο", "language", ("Πάτρα",), (), "conditional"),  # noqa: E501
        ("\\boxed{3\\frac{1}{2}}", "3.5", "numeric", (), (), "expression"),
        ("Τον ενόχλησε πολύ.", "τον εκνεύρισε", "language", (), (), "paraphrase"),
        ("Πάτρα, ή μάλλον Βόλος.", "Βόλος", "language", ("Πάτρα",), (), "self_correction"),
        ("I think it is 48.", "48", "numeric", (), (), "hedge"),
    ],
)  # fmt: skip
def test_an_unsure_verdict_names_one_of_the_documented_classes(
    response: str, answer: str, kind: str, distractors: tuple[str, ...],
    accepted: tuple[str, ...], reason: str,
) -> None:  # fmt: skip
    result = score_text(
        response, answer, kind=kind, distractors=distractors, accepted_answers=accepted,
        question="Τι σημαίνει «μου την έσπασε»;" if reason == "paraphrase" else None,
    )  # fmt: skip
    assert (result.verdict, result.unsure_reason) == ("unsure", reason), result
    assert not result.correct and result.unsure_reason in UNSURE_REASONS


def test_a_task_that_demands_greek_script_makes_another_language_surely_wrong() -> None:
    result = score_text("Tuesday.", "Τρίτη", answer_script="greek")
    assert (result.verdict, result.method) == ("incorrect", "wrong_script")
    assert score_text("Yes.", "ναι", answer_script="greek").verdict == "incorrect"


@pytest.mark.parametrize(
    ("response", "verdict"),
    [
        ("46, wait, actually 48.", "correct"),
        ("48. Wait, actually it's 46.", "incorrect"),
        ("12 × 4 = 44, no wait, 12 × 4 = 48", "correct"),
        ("\\boxed{6 \\times 8}", "correct"),
        ("\\boxed{6 \\times 9}", "incorrect"),
        ("\\boxed{2^4 \\cdot 3}", "correct"),
        ("48 (since 12 × 4 = 48)", "correct"),
        ("47 (because 12 × 4 = 48)", "incorrect"),
        ("Answer: 46\nAnswer: 48", "incorrect"),
        ("**46**\n\n**48**", "incorrect"),
        ("46–50", "incorrect"),
        ("48 ± 2", "incorrect"),
        ("If you count from zero, 47; if from one, 48.", "incorrect"),
    ],
)
def test_numeric_commitment_cues(response: str, verdict: str) -> None:
    assert score_text(response, "48", kind="numeric").verdict == verdict


@pytest.mark.parametrize(
    ("response", "answer", "kind", "verdict"),
    [
        # A range or a duration decides only when it is the answer itself.
        ("From 2019 to 2021, a total of 48.", "48", "numeric", "correct"),
        ("It takes 2 hours and 30 minutes, so 150 minutes.", "150", "numeric", "correct"),
        ("Στη 1 ώρα και 30 λεπτά.", "90 λεπτά", "language", "correct"),
        ("Η πτήση διαρκεί 1 ώρα και 50 λεπτά.", "50 λεπτά", "language", "incorrect"),
        # «αν και» concedes, it sets no condition; «εκτός αν» with no other answer is a note.
        ("Η Αθήνα, αν και η Πάτρα είναι κοντά.", "Αθήνα", "language", "correct"),
        ("15 ημέρες, εκτός αν μετράμε και την Κυριακή.", "15", "numeric", "correct"),
        # A declined name: in a phrase it is the key; alone in the genitive, unsure.
        ("Στου Θανάση.", "Θανάσης", "language", "correct"),
        ("Ο Μαρίνος.", "του Μαρίνου", "language", "correct"),
        ("Λονδίνου", "Λονδίνο", "language", "unsure"),
        ("Δημητρακόπουλος", "Δημητρακοπούλου", "language", "incorrect"),
        ("Δεν είναι του Μαρίνου.", "Μαρίνος", "language", "incorrect"),
        # An open answer in other inflections of its own words; a negation leaves it unsure.
        ("Καθυστέρησε πολύ, μεγάλη αναμονή.", "μεγάλη καθυστέρηση", "language", "correct"),
        ("Δεν καθυστέρησε, μεγάλη ησυχία.", "μεγάλη καθυστέρηση", "language", "unsure"),
    ],
)
def test_cues_decide_only_when_they_are_the_answer(
    response: str, answer: str, kind: str, verdict: str
) -> None:
    assert score_text(response, answer, kind=kind).verdict == verdict


def test_a_latin_word_the_transliteration_does_not_read_as_the_key_is_unsure() -> None:
    # «ευήκοος» in Greeklish and an English translation look alike to the rules: neither
    # is credited, and neither is called surely wrong.
    for response in ("evikoos", "Euboean"):
        result = score_text(response, "Ευβοϊκός")
        assert (result.verdict, result.unsure_reason) == ("unsure", "other_language"), result
    assert score_text("Evvoikos", "Ευβοϊκός").verdict == "correct"


def test_every_unsure_reason_the_rules_give_is_documented() -> None:
    source = Path(__file__).resolve().parents[2] / "src" / "llm_eval" / "scoring"
    given = {
        match.group(1)
        for path in source.glob("*.py")
        for match in re.finditer(
            r'(?:doubtful|ScoreResult\.unsure)\(\s*"(\w+)"', path.read_text(encoding="utf-8")
        )
    }
    assert given and given <= set(UNSURE_REASONS), given - set(UNSURE_REASONS)
    assert set(UNSURE_REASONS) <= given, set(UNSURE_REASONS) - given
