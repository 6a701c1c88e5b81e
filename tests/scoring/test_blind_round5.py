"""The fifth held-back set: its labels are well formed, and the scorer's agreement with them.

The set was written and labelled before any scorer ran on it, measured once blind, and then
used to develop the rules; the goals are issue 31's.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from tests.support.blind_round5 import BLIND_ROUND5_GOALS, LABELS, load_cases, measure, report

DATA = Path(__file__).resolve().parents[2] / "data"
KINDS = {
    "greek_messages": "language",
    "language_understanding": "language",
    "sample_math": "numeric",
    "aimo3_reference": "numeric",
    "sample_logic": "exact",
}
FIELDS = {
    "id", "benchmark", "task_id", "kind", "shape", "question", "answer", "accepted_answers",
    "distractors", "answer_script", "answer_format", "response", "label", "why", "truncated",
}  # fmt: skip


def test_every_row_is_a_labelled_reply_to_a_task_of_its_benchmark() -> None:
    cases = load_cases()
    tasks = {
        bench: {
            task["id"]: task
            for task in map(json.loads, (DATA / f"{bench}.jsonl").read_text("utf-8").splitlines())
        }
        for bench in KINDS
    }
    assert len(cases) >= 450
    assert len({case["id"] for case in cases}) == len(cases)
    for case in cases:
        assert set(case) == FIELDS, case["id"]
        assert case["label"] in LABELS and case["why"].strip(), case["id"]
        assert case["kind"] == KINDS[case["benchmark"]], case["id"]
        task = tasks[case["benchmark"]][case["task_id"]]
        assert case["question"] == task["question"], case["id"]
    labels = Counter(case["label"] for case in cases)
    assert labels["ambiguous"] <= 0.02 * len(cases)
    assert abs(labels["correct"] - labels["incorrect"]) <= 0.1 * len(cases)
    assert sum(case["shape"] == "gaming" for case in cases) >= 20


def test_the_scorer_reaches_the_goals_on_the_fifth_held_back_set() -> None:
    """Measured once blind (0.946 sure agreement), then used to develop the rules: the goals
    hold here, and a fresh held-back set measures them blind."""
    result = measure()
    assert not result.shortfalls(BLIND_ROUND5_GOALS), report(result)
    assert result.overall.right_refused_share <= 0.01, report(result)
