"""A task file edited after its run (tasks deleted, added, a question changed), through the
real CLI: a rerun drops the rows of deleted tasks, and the report counts new tasks and changed
questions as missing and says INCOMPLETE until `--resume` has run them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llm_eval.runner.trace_io import read_rows
from tests.support.cli import llm_eval

pytestmark = pytest.mark.slow  # CLI subprocesses

MODEL = "mock-varied"


def _cli(root: Path, *args: str) -> str:
    done = llm_eval(*args, "--config-root", str(root), cwd=root)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def _coverage(root: Path, results: Path) -> str:
    report = results.with_name("report.md")
    _cli(root, "report", "--results", str(results), "--output", str(report), "--no-charts")
    text = report.read_text(encoding="utf-8")
    return text.split("## Errors and coverage")[1].split("\n## ")[0]


def _edit_tasks(path: Path, changed: str) -> None:
    """Delete the first two tasks, add two, and change the question of task `changed`."""
    tasks = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    tasks = tasks[2:]
    for task in tasks:
        if task["id"] == changed:
            task["question"] = task["question"].replace("What is", "Compute")
    tasks += [{"id": f"math_new_{n}", "task_type": "single_turn", "category": "arithmetic",
               "question": f"What is {n} + {n}? Answer with the number only.",
               "answer": str(2 * n)} for n in (1, 2)]  # fmt: skip
    path.write_text("".join(json.dumps(task) + "\n" for task in tasks), encoding="utf-8")


def test_only_wrong_after_the_task_file_changed_leaves_the_report_incomplete(
    config_copy: Path, tmp_path: Path
) -> None:
    root, out = config_copy, tmp_path / "t.jsonl"
    _cli(root, "run", "--model", MODEL, "--benchmark", "sample_math", "--output", str(out))
    first = {row.task_id: row.status for row in read_rows(out)}
    assert len(first) == 8 and "complete" in _coverage(root, out)
    changed = next(task for task, status in list(first.items())[2:] if status == "correct")
    _edit_tasks(root / "data" / "sample_math.jsonl", changed)

    printed = _cli(root, "run", "--model", MODEL, "--benchmark", "sample_math",
                   "--only-wrong", str(out), "--output", str(out))  # fmt: skip
    rows = read_rows(out)
    assert not {"math_001", "math_002"} & {row.task_id for row in rows}
    assert "2 rows dropped" in printed
    assert "1 row answers a changed question" in printed and "2 tasks have no row" in printed
    coverage = _coverage(root, out)
    assert "**INCOMPLETE**" in coverage and "sample_math: 3" in coverage  # 2 new, 1 changed
    assert "answers a changed question" in coverage

    _cli(root, "run", "--model", MODEL, "--benchmark", "sample_math", "--resume",
         "--output", str(out))  # fmt: skip
    rows = read_rows(out)
    assert len(rows) == 8 and {"math_new_1", "math_new_2"} <= {row.task_id for row in rows}
    coverage = _coverage(root, out)
    assert "INCOMPLETE" not in coverage and "complete" in coverage


def test_the_report_leaves_out_rows_of_deleted_tasks(config_copy: Path, tmp_path: Path) -> None:
    root, out = config_copy, tmp_path / "t.jsonl"
    _cli(root, "run", "--model", MODEL, "--benchmark", "sample_math", "--output", str(out))
    _edit_tasks(root / "data" / "sample_math.jsonl", changed="math_003")
    coverage = _coverage(root, out)  # no rerun: the file still holds the old rows
    model_line = next(line for line in coverage.splitlines() if line.startswith("| Mock varied"))
    assert "| 5 |" in model_line  # 8 rows less 2 of deleted tasks and 1 of a changed question
    assert "**INCOMPLETE**" in model_line and "sample_math: 3" in model_line
    assert "2 rows of tasks no longer in their task files" in coverage


def test_resume_after_tasks_were_deleted_drops_their_rows_and_completes(
    config_copy: Path, tmp_path: Path
) -> None:
    root, out = config_copy, tmp_path / "t.jsonl"
    _cli(root, "run", "--model", MODEL, "--benchmark", "sample_math", "--output", str(out))
    tasks = root / "data" / "sample_math.jsonl"
    tasks.write_text("".join(tasks.read_text(encoding="utf-8").splitlines(True)[2:]))
    printed = _cli(root, "run", "--model", MODEL, "--benchmark", "sample_math", "--resume",
                   "--output", str(out))  # fmt: skip
    assert "2 rows dropped" in printed
    assert len(read_rows(out)) == 6
    coverage = _coverage(root, out)  # the record no longer owes the deleted tasks' rows
    assert "INCOMPLETE" not in coverage and "complete" in coverage


def test_score_metrics_leave_out_rows_of_deleted_and_changed_tasks(
    config_copy: Path, tmp_path: Path
) -> None:
    root, out, metrics = config_copy, tmp_path / "t.jsonl", tmp_path / "m.json"
    _cli(root, "run", "--model", MODEL, "--benchmark", "sample_math", "--output", str(out))
    _edit_tasks(root / "data" / "sample_math.jsonl", changed="math_003")
    _cli(root, "score", "--results", str(out), "--metrics", str(metrics))
    current = [row for row in read_rows(out) if row.task_id not in {"math_001", "math_002",
                                                                     "math_003"}]  # fmt: skip
    assert len(current) == 5
    counted = json.loads(metrics.read_text(encoding="utf-8"))["tokens"]
    assert counted == sum(row.usage.total_tokens or 0 for row in current)
