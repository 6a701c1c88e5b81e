"""Well-formedness of the round-8 held-back set of labelled model replies.

The set measures the answer scorer, so its task fields must be exact copies of the
benchmark task files: a drifted question or key would measure the wrong thing.
"""

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
BLIND_SET = REPO_ROOT / "tests" / "scoring" / "blind_round8.jsonl"
BENCHMARKS_CONFIG = REPO_ROOT / "configs" / "benchmarks.yaml"

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
# Key fields copied from the task; a task without one of them stores null.
TASK_KEY_FIELDS = ("answer", "accepted_answers", "distractors", "answer_script", "answer_format")
LABELS = {"correct", "incorrect", "ambiguous"}


def _load_rows() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    with BLIND_SET.open(encoding="utf-8") as handle:
        for line_number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as error:
                raise AssertionError(f"{BLIND_SET.name}:{line_number}: {error}") from error
    return rows


def _benchmarks() -> dict[str, dict[str, Any]]:
    config = yaml.safe_load(BENCHMARKS_CONFIG.read_text(encoding="utf-8"))
    benchmarks: dict[str, dict[str, Any]] = config["benchmarks"]
    return benchmarks


def _tasks_by_id(path: Path) -> dict[str, dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        tasks = [json.loads(line) for line in handle if line.strip()]
    return {task["id"]: task for task in tasks}


ROWS = _load_rows()
BENCHMARKS = _benchmarks()
# Only single-turn benchmarks keep a `question` per task; the set draws from those alone.
TASKS_BY_PATH = {
    benchmark["path"]: _tasks_by_id(REPO_ROOT / benchmark["path"])
    for benchmark in BENCHMARKS.values()
    if benchmark.get("task_type") == "single_turn"
}


def test_set_has_the_planned_size() -> None:
    assert len(ROWS) >= 250
    assert len({row["task_id"] for row in ROWS}) >= 80


def test_ids_are_unique_and_numbered() -> None:
    ids = [row["id"] for row in ROWS]
    assert len(ids) == len(set(ids))
    assert all(identifier.startswith("b8_") for identifier in ids)


@pytest.mark.parametrize("row", ROWS, ids=lambda row: str(row.get("id")))
def test_row_has_every_field_with_valid_values(row: dict[str, Any]) -> None:
    assert set(row) == set(FIELDS)
    assert row["label"] in LABELS
    assert isinstance(row["truncated"], bool)
    for text_field in ("shape", "response", "why", "question"):
        assert isinstance(row[text_field], str) and row[text_field].strip()


@pytest.mark.parametrize("row", ROWS, ids=lambda row: str(row.get("id")))
def test_task_fields_equal_the_benchmark_files(row: dict[str, Any]) -> None:
    benchmark = BENCHMARKS[row["benchmark"]]
    assert row["kind"] == benchmark["scorer"]
    task = TASKS_BY_PATH[benchmark["path"]][row["task_id"]]
    assert row["question"] == task["question"]
    for field in TASK_KEY_FIELDS:
        assert row[field] == task.get(field), field


def test_the_scorer_reaches_the_goals_on_the_eighth_held_back_set() -> None:
    """Measured blind once, after its labels were written and before any rule was written
    from it; a fresh reader then settled each sure disagreement (3 labels changed, kept in
    `blind_round8_adjudicated.jsonl`). These are the figures of that measurement."""
    from tests.support.blind_sets import Goals, load_cases, measure, report

    cases = load_cases(Path(__file__).with_name("blind_round8.jsonl"))
    result = measure(cases)
    assert not result.shortfalls(Goals()), report(result, cases)
    assert result.overall.right_refused_share <= 0.015, report(result, cases)
    assert result.overall.unsure_share <= 0.02, report(result, cases)
