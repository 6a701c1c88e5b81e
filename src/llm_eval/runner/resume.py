"""What `--resume` does with a finished row whose task changed since it was made.

A changed question or turns: the reply answers another question, so the row runs again. A
changed key (answer, accepted forms, decoys, regex, script, format, or the benchmark's
scorer): the reply still answers the question sent, so the row is rescored under today's key
and not run again. A deleted task: its rows leave the file (a resume or a rerun), and the run
record stops owing them. Each is counted, so the run says so.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from typing import Protocol

from llm_eval.config.run_inputs import question_digest
from llm_eval.schemas import BenchmarkConfig, RowKey, Task, TraceRow
from llm_eval.scoring.current_key import CurrentTask, with_current_key
from llm_eval.scoring.rows import score_row


class ResumeCounts(Protocol):
    """Where the checks count the rows they changed (the run's summary)."""

    rows_stale: int
    rows_regraded: int
    dropped: Counter[tuple[str, str]]


def question_unchanged(
    tasks: Mapping[RowKey, Task], counts: ResumeCounts
) -> Callable[[TraceRow], bool]:
    """Whether a finished row was made from the task text this run would send.

    A row whose task is not in this run's plan, or that recorded no digest, is kept.
    """
    current = {key: question_digest(task) for key, task in tasks.items()}

    def unchanged(row: TraceRow) -> bool:
        digest = current.get(row.key)
        if digest is None or row.question_digest is None or row.question_digest == digest:
            return True
        counts.rows_stale += 1
        return False

    return unchanged


def task_still_listed(
    task_ids: Mapping[str, frozenset[str]], counts: ResumeCounts
) -> Callable[[TraceRow], bool]:
    """Whether a row's task is still in its benchmark's file (every task, before filters).

    A row of a deleted task can be neither rerun nor counted: it leaves the results file.
    Rows of benchmarks this run did not read, and rows that recorded no question digest (as
    `question_unchanged` keeps them), are kept.
    """

    def listed(row: TraceRow) -> bool:
        ids = task_ids.get(row.benchmark)
        if ids is None or row.question_digest is None or row.task_id in ids:
            return True
        counts.dropped[(row.model, row.benchmark)] += 1
        return False

    return listed


def rerun_gaps(
    planned: Mapping[RowKey, Task], kept: Mapping[RowKey, TraceRow], running: set[RowKey]
) -> tuple[list[RowKey], list[RowKey]]:
    """What a targeted rerun leaves unresolved in the file: kept rows whose question changed
    (stale), and planned rows of benchmarks the file holds that have no row (new tasks)."""
    current = question_unchanged(planned, _Tally())
    stale = [key for key, row in kept.items() if key in planned and not current(row)]
    held = {(row.model, row.benchmark) for row in kept.values()}
    missing = [key for key in planned
               if key not in kept and key not in running and key[:2] in held]  # fmt: skip
    return stale, missing


class _Tally:
    """Counts nobody reads: `rerun_gaps` needs the checks' verdicts, not their tallies."""

    def __init__(self) -> None:
        self.rows_stale = self.rows_regraded = 0
        self.dropped: Counter[tuple[str, str]] = Counter()


def plan_without_dropped(
    planned: Mapping[str, Mapping[str, int]], dropped: Mapping[tuple[str, str], int]
) -> dict[str, dict[str, int]]:
    """An earlier run's plan less the rows dropped since for deleted tasks: the file no
    longer owes them (a plan only grows otherwise, see `run_record.merged_plan`)."""
    kept = {model: dict(benchmarks) for model, benchmarks in planned.items()}
    for (model, benchmark), rows in dropped.items():
        if benchmark in kept.get(model, {}):
            kept[model][benchmark] = max(kept[model][benchmark] - rows, 0)
    return kept


def regraded_under_current_key(
    tasks: Mapping[RowKey, Task], benchmarks: Mapping[str, BenchmarkConfig], counts: ResumeCounts
) -> Callable[[TraceRow], TraceRow]:
    """A finished row, rescored when its task's key or scorer changed since it was made.

    Rows of tasks outside this run's plan are kept as they are: `score` grades them later.
    """
    keys = {
        (benchmark, task.id): CurrentTask.of(task, benchmarks[benchmark].scorer)
        for (_model, benchmark, _task_id, _epoch), task in tasks.items()
    }

    def regraded(row: TraceRow) -> TraceRow:
        if (row.benchmark, row.task_id) not in keys:
            return row
        current = with_current_key(row, keys)
        if current is row:
            return row
        counts.rows_regraded += 1
        return score_row(current)

    return regraded
