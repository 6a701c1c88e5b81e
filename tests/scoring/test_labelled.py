"""The scorers against a hand-labelled set of realistic responses (tests/scoring_cases.jsonl).

Recall (true positives / positives) must stay at or above 97% and false positives at or
below one per hundred negatives: the scorers may miss an odd phrasing, but they must not
credit a near miss.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from llm_eval.scoring import score_text

CASES_PATH = Path(__file__).with_name("scoring_cases.jsonl")
MIN_RECALL = 0.97
MAX_FP_PER_100_NEGATIVES = 1.0
MAX_UNSURE_SHARE = 0.05


def load_cases() -> list[dict[str, Any]]:
    """The labelled cases, one JSON object per line."""
    with CASES_PATH.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def verdict(case: dict[str, Any]) -> bool:
    """The scorer's verdict on one case."""
    return score_text(
        case["response"], case["answer"], answer_regex=case["answer_regex"], kind=case["kind"]
    ).correct


@pytest.fixture(scope="module")
def cases() -> list[dict[str, Any]]:
    return load_cases()


def test_the_labelled_set_is_large_and_balanced(cases: list[dict[str, Any]]) -> None:
    negatives = sum(not case["expected"] for case in cases)
    assert len(cases) >= 220
    assert 0.25 <= negatives / len(cases) <= 0.5
    assert {case["kind"] for case in cases} == {"language", "numeric", "exact"}
    assert all(case["note"] for case in cases)


def test_recall_and_false_positive_rate(cases: list[dict[str, Any]]) -> None:
    positives = [case for case in cases if case["expected"]]
    negatives = [case for case in cases if not case["expected"]]
    true_positives = sum(verdict(case) for case in positives)
    false_positives = sum(verdict(case) for case in negatives)
    recall = true_positives / len(positives)
    fp_per_100 = 100 * false_positives / len(negatives)
    print(
        f"\nlabelled set: {len(cases)} cases, recall {recall:.3f} "
        f"({true_positives}/{len(positives)}), false positives {fp_per_100:.2f} per 100 "
        f"negatives ({false_positives}/{len(negatives)})"
    )
    assert recall >= MIN_RECALL
    assert fp_per_100 <= MAX_FP_PER_100_NEGATIVES


def test_no_sure_verdict_contradicts_its_label(cases: list[dict[str, Any]]) -> None:
    """A sure verdict must be right; a reply the rules cannot settle may be unsure (its class
    named), never credited, and unsure stays rare."""
    wrong, unsure = [], 0
    for case in cases:
        result = score_text(
            case["response"], case["answer"], answer_regex=case["answer_regex"], kind=case["kind"]
        )
        if result.verdict == "unsure":
            unsure += 1
            assert result.unsure_reason, result
            continue
        if result.correct != case["expected"]:
            wrong.append(
                f"{'missed' if case['expected'] else 'wrongly credited'} [{case['kind']}] "
                f"answer={case['answer']!r} response={case['response'][:80]!r} "
                f"method={result.method} extracted={result.extracted!r} ({case['note']})"
            )
    assert not wrong, "misclassified cases:\n" + "\n".join(wrong)
    assert unsure <= MAX_UNSURE_SHARE * len(cases)
