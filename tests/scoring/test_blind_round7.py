"""Well-formedness of the held-back labelled set `blind_round7.jsonl`.

The set measures the answer scorer honestly only if every line is complete and its copy of
the task (question and key fields) is exactly what the task file holds: a stale copy would
measure the scorer against a key the benchmark no longer uses.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.blind_sets import Goals, is_gaming, load_cases, measure, report

ROOT = Path(__file__).resolve().parents[2]
SET_PATH = Path(__file__).with_name("blind_round7.jsonl")

# Benchmark name -> (task file, scorer kind), as configs/benchmarks.yaml declares them.
BENCHMARKS: dict[str, tuple[str, str]] = {
    "greek_messages": ("data/greek_messages.jsonl", "language"),
    "language_understanding": ("data/language_understanding.jsonl", "language"),
    "sample_math": ("data/sample_math.jsonl", "numeric"),
    "sample_logic": ("data/sample_logic.jsonl", "exact"),
    "aimo3_reference": ("data/aimo3_reference.jsonl", "numeric"),
}
FIELDS = (
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
)
# Copied from the task line; a task without the field has null here.
TASK_FIELDS = (
    "question",
    "answer",
    "accepted_answers",
    "distractors",
    "answer_script",
    "answer_format",
)
LABELS = {"correct", "incorrect", "ambiguous"}


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as error:
            pytest.fail(f"{path}:{number}: not JSON ({error})")
    return rows


@pytest.fixture(scope="module")
def rows() -> list[dict[str, Any]]:
    return _read_jsonl(SET_PATH)


@pytest.fixture(scope="module")
def tasks() -> dict[str, dict[str, dict[str, Any]]]:
    return {
        name: {task["id"]: task for task in _read_jsonl(ROOT / path)}
        for name, (path, _kind) in BENCHMARKS.items()
    }


def test_every_line_has_exactly_the_fields(rows: list[dict[str, Any]]) -> None:
    assert rows, "the set is empty"
    for row in rows:
        assert set(row) == set(FIELDS), f"{row.get('id')}: fields {sorted(set(row) ^ set(FIELDS))}"


def test_ids_are_unique_and_numbered(rows: list[dict[str, Any]]) -> None:
    ids = [row["id"] for row in rows]
    assert len(ids) == len(set(ids))
    assert ids == [f"b7_{n:03d}" for n in range(1, len(ids) + 1)]


def test_labels_and_types_are_valid(rows: list[dict[str, Any]]) -> None:
    for row in rows:
        where = row["id"]
        assert row["label"] in LABELS, where
        assert isinstance(row["truncated"], bool), where
        for field in ("shape", "response", "why"):
            assert isinstance(row[field], str) and row[field].strip(), f"{where}: empty {field}"


def test_benchmark_and_kind_match_the_config(rows: list[dict[str, Any]]) -> None:
    for row in rows:
        assert row["benchmark"] in BENCHMARKS, row["id"]
        assert row["kind"] == BENCHMARKS[row["benchmark"]][1], row["id"]


def test_task_fields_equal_the_task_file(
    rows: list[dict[str, Any]], tasks: dict[str, dict[str, dict[str, Any]]]
) -> None:
    for row in rows:
        task = tasks[row["benchmark"]].get(row["task_id"])
        assert task is not None, f"{row['id']}: no task {row['task_id']} in {row['benchmark']}"
        for field in TASK_FIELDS:
            assert row[field] == task.get(field), f"{row['id']}: {field} differs from the task"


def test_the_scorer_reaches_the_goals_on_the_seventh_held_back_set() -> None:
    """Measured once blind (0.965 sure agreement, 4.5% wrong credited, 2.5% right refused,
    1.3% unsure, one gaming reply credited), then used to develop the rules: the goals hold
    here, and a fresh held-back set measures them blind."""
    cases = load_cases(SET_PATH)
    assert sum(is_gaming(case["shape"]) for case in cases) >= 10
    result = measure(cases)
    assert not result.shortfalls(Goals()), report(result, cases)
    assert result.overall.sure_agreement >= 0.995, report(result, cases)
    assert result.overall.right_refused_share <= 0.005, report(result, cases)
    assert result.overall.unsure_share <= 0.03, report(result, cases)
