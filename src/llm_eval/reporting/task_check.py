"""Rows checked against today's task files before anything is counted.

A task file edited after a run leaves rows behind that no figure may use: rows of tasks the
file no longer holds, and rows answering a question since changed (stale). Both are left out
of every figure and counted, and the model is INCOMPLETE until a rerun resolves them (`--resume`
runs changed and new tasks and drops the rows of deleted ones). Once a benchmark shows such
rows, its file is newer than the run, so every task of today's file without a current row
is missing too, whatever the run planned.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace

from llm_eval.reporting.plan import RunPlan
from llm_eval.schemas import TraceRow

Questions = Mapping[str, Mapping[str, str]]
"""Per benchmark, each task id of today's file and the digest of its question."""


def left_out(row: TraceRow, questions: Questions) -> str | None:
    """`gone` (its task left the file), `stale` (its question changed) or None (current).

    Rows of a benchmark today's config does not know, and rows that recorded no question
    digest (made before rows did, or by hand), are kept: nothing says they are old.
    """
    tasks = questions.get(row.benchmark)
    if tasks is None or row.question_digest is None:
        return None
    digest = tasks.get(row.task_id)
    if digest is None:
        return "gone"
    return "stale" if row.question_digest != digest else None


def checked_rows(
    rows: Sequence[TraceRow], questions: Questions, plan: RunPlan | None
) -> tuple[list[TraceRow], RunPlan | None]:
    """The rows every figure may use, and the plan with what the left-out rows owe."""
    current: list[TraceRow] = []
    outdated: Counter[tuple[str, str, str]] = Counter()
    for row in rows:
        why = left_out(row, questions)
        if why is None:
            current.append(row)
        else:
            outdated[(row.model, row.benchmark, why)] += 1
    if not outdated:
        return current, plan
    return current, _owing(plan or RunPlan(), current, outdated, questions)


def _owing(
    plan: RunPlan,
    current: Sequence[TraceRow],
    outdated: Counter[tuple[str, str, str]],
    questions: Questions,
) -> RunPlan:
    """`plan` where a benchmark with outdated rows owes today's tasks x epochs, as does each
    benchmark of a model the plan did not know (it was counted against today's files)."""
    epochs: dict[tuple[str, str], int] = {}
    for row in current:
        key = (row.model, row.benchmark)
        epochs[key] = max(epochs.get(key, 1), row.epoch + 1)
    owing = {(model, benchmark) for model, benchmark, _why in outdated}
    owing |= {key for key in epochs if key[0] not in plan.planned and key[1] in questions}
    planned = {model: dict(benchmarks) for model, benchmarks in plan.planned.items()}
    for model, benchmark in sorted(owing):
        rows = len(questions[benchmark]) * epochs.get((model, benchmark), 1)
        planned.setdefault(model, {})[benchmark] = rows
    counts: dict[str, dict[str, int]] = {}
    for (model, _benchmark, why), n in outdated.items():
        counts.setdefault(model, {})[why] = counts.get(model, {}).get(why, 0) + n
    return replace(plan, planned=planned, outdated=counts)
