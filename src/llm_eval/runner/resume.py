"""What `--resume` does with a finished row whose task changed since it was made.

A changed question or turns: the reply answers another question, so the row runs again. A
changed key (answer, accepted forms, decoys, regex, script, format, or the benchmark's
scorer): the reply still answers the question sent, so the row is rescored under today's key
and not run again. Both are counted, so the run says so.
"""

from __future__ import annotations

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
