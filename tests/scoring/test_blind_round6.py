"""The sixth held-back set of labelled replies is well formed and matches the task files.

Each line is one model reply to one task, labelled by a careful grader. The set is only
useful for measuring the scorer if its questions and keys are exactly what the benchmark
serves, so every line is checked against the task file it names.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.support.blind_sets import Goals, is_gaming, load_cases, measure, report

ROOT = Path(__file__).resolve().parents[2]
SET_PATH = ROOT / "tests" / "scoring" / "blind_round6.jsonl"

# Benchmark name -> (task file, scorer kind), as configs/benchmarks.yaml declares them.
BENCHMARKS = {
    "greek_messages": ("data/greek_messages.jsonl", "language"),
    "language_understanding": ("data/language_understanding.jsonl", "language"),
    "sample_math": ("data/sample_math.jsonl", "numeric"),
    "sample_logic": ("data/sample_logic.jsonl", "exact"),
    "aimo3_reference": ("data/aimo3_reference.jsonl", "numeric"),
}
FIELDS = {
    "id",
    "benchmark",
    "task_id",
    "kind",
    "shape",
    "question",
    "answer",
    "accepted_answers",
    "distractors",
    "answer_script",
    "answer_format",
    "response",
    "label",
    "why",
    "truncated",
}
LABELS = {"correct", "incorrect", "ambiguous"}
COPIED_FROM_TASK = ("accepted_answers", "distractors", "answer_script", "answer_format")


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as error:
                raise AssertionError(f"{path}:{number}: not JSON ({error})") from error
    return rows


ROWS = _read_jsonl(SET_PATH)
TASKS = {
    name: {task["id"]: task for task in _read_jsonl(ROOT / path)}
    for name, (path, _) in BENCHMARKS.items()
}


def test_set_has_the_planned_size_and_spread() -> None:
    assert 300 <= len(ROWS) <= 340
    assert 90 <= len({row["task_id"] for row in ROWS}) <= 110
    labels = Counter(row["label"] for row in ROWS)
    # Roughly half right, half wrong; ambiguous stays rare.
    assert abs(labels["correct"] - labels["incorrect"]) <= len(ROWS) // 5
    assert labels["ambiguous"] <= len(ROWS) // 20


def test_ids_are_unique_and_numbered() -> None:
    ids = [row["id"] for row in ROWS]
    assert len(ids) == len(set(ids))
    assert all(i.startswith("b6_") and i[3:].isdigit() for i in ids)


@pytest.mark.parametrize("row", ROWS, ids=lambda row: str(row.get("id")))
def test_row_is_well_formed(row: dict[str, Any]) -> None:
    assert set(row) == FIELDS
    assert row["label"] in LABELS
    assert isinstance(row["truncated"], bool)
    for field in ("shape", "response", "why"):
        assert isinstance(row[field], str) and row[field].strip(), field
    assert row["benchmark"] in BENCHMARKS
    assert row["kind"] == BENCHMARKS[row["benchmark"]][1]


@pytest.mark.parametrize("row", ROWS, ids=lambda row: str(row.get("id")))
def test_row_matches_its_task(row: dict[str, Any]) -> None:
    task = TASKS[row["benchmark"]].get(row["task_id"])
    assert task is not None, f"{row['task_id']} is not in {row['benchmark']}"
    assert task["task_type"] == "single_turn"
    assert row["question"] == task["question"]
    assert row["answer"] == task["answer"]
    for field in COPIED_FROM_TASK:
        assert row[field] == task.get(field), field


BLIND_ROUND6_GOALS = Goals(wrong_credited=0.007)
"""Issue 31's goals, but one wrong reply credited (1 of 152): `\\boxed{14 \\times 12}` for 168,
labelled wrong as an unevaluated expression, which the scorer evaluates (simple LaTeX
arithmetic in a box is the issue's own rule); that label is being checked again."""


def test_the_scorer_reaches_the_goals_on_the_sixth_held_back_set() -> None:
    """Measured once blind (0.967 sure agreement, 4.6% wrong credited, 2 gaming replies
    credited), then used to develop the rules: the goals hold here, and a fresh held-back
    set measures them blind."""
    cases = load_cases(SET_PATH)
    assert sum(is_gaming(case["shape"]) for case in cases) >= 10
    result = measure(cases)
    assert not result.shortfalls(BLIND_ROUND6_GOALS), report(result, cases)
    assert result.overall.right_refused_share <= 0.01, report(result, cases)
    assert result.overall.unsure_share <= 0.06, report(result, cases)
