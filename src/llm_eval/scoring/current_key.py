"""Today's answer keys: a row is graded by the key its task has now, not the one it ran under.

A trace row stamps the key and scorer kind its run saw. A key fixed since (an answer
corrected, a form accepted, a decoy added, another scorer) must reach the verdict without
calling the model again, since the reply is still valid. `with_current_key` puts today's key
into a row's key fields and keeps the stamped one as `run_key`; called before `score_rows`,
it leaves the scoring itself unchanged. A row whose task is gone from the task files, or
whose question changed since, keeps the key it ran under and says why (`key_unchecked`):
today's key belongs to no task, or to another question, than the one the reply answers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from llm_eval.config.loading import load_config
from llm_eval.config.run_inputs import question_digest
from llm_eval.config.task_files import read_task_file
from llm_eval.errors import ConfigError, Problem
from llm_eval.schemas import GradingKey, KeyUnchecked, Task, TraceRow
from llm_eval.scoring.rows import score_row


@dataclass(frozen=True)
class CurrentTask:
    """What today's task files say of one task: its key and the digest of its text."""

    key: GradingKey
    question_digest: str

    @classmethod
    def of(cls, task: Task, scorer: str) -> CurrentTask:
        return cls(GradingKey.of_task(task, scorer), question_digest(task))


CurrentKeys = Mapping[tuple[str, str], CurrentTask]
"""Today's tasks by (benchmark, task id)."""


def current_keys(
    config_root: Path, benchmarks: Iterable[str]
) -> dict[tuple[str, str], CurrentTask]:
    """Today's key of every task of `benchmarks`, from the config and task files under
    `config_root`. A benchmark the config no longer has contributes nothing (its rows are
    then `task_missing`); a task file with a bad line is an error, not a missing key."""
    try:
        config = load_config(config_root)
    except ConfigError as exc:
        why = Problem(
            str(config_root), None,
            "score grades each row with today's answer keys, read from the config and task "
            "files of --config-root; fix the problems above or point --config-root at the suite",
        )  # fmt: skip
        raise ConfigError([*exc.problems, why]) from None
    keys: dict[tuple[str, str], CurrentTask] = {}
    problems: list[Problem] = []
    for name in sorted(set(benchmarks)):
        bench = config.benchmarks.get(name)
        if bench is None:
            continue
        loaded = read_task_file(config.benchmark_path(name), expected_type=bench.task_type)
        problems += loaded.problems
        for entry in loaded.tasks:
            keys[(name, entry.task.id)] = CurrentTask.of(entry.task, bench.scorer)
    if problems:
        raise ConfigError(problems)
    return keys


def with_current_key(row: TraceRow, keys: CurrentKeys) -> TraceRow:
    """`row` graded by today's key of its task; the key it ran under stays as `run_key`.

    The same row comes back when today's key is the one in its fields, so rescoring an
    unchanged suite writes the same bytes.
    """
    made_under = row.run_key or row.grading_key()
    current = keys.get((row.benchmark, row.task_id))
    if current is None:
        return _kept_as_run(row, made_under, "task_missing")
    if row.question_digest is not None and row.question_digest != current.question_digest:
        return _kept_as_run(row, made_under, "task_text_changed")
    if row.key_unchecked is None and current.key == row.grading_key():
        return row
    run_key = None if current.key == made_under else made_under
    update = {**current.key.model_dump(), "run_key": run_key, "key_unchecked": None}
    return row.model_copy(update=update)


def _kept_as_run(row: TraceRow, made_under: GradingKey, why: KeyUnchecked) -> TraceRow:
    update = {**made_under.model_dump(), "run_key": None, "key_unchecked": why}
    return row.model_copy(update=update)


@dataclass(frozen=True)
class KeyChanges:
    """What today's keys did to a file of scored rows, for the console."""

    regraded: int
    """Rows graded by a key other than the one they ran under."""
    verdicts_changed: int
    """Of those, rows whose verdict differs from the one the run's key gives."""
    missing: list[str]
    """`benchmark/task` of rows whose task is no longer in the task files."""
    text_changed: list[str]
    """`benchmark/task` of rows whose question or turns changed since they were made."""

    @classmethod
    def of(cls, scored: Iterable[TraceRow]) -> KeyChanges:
        regraded = changed = 0
        missing: list[str] = []
        text_changed: list[str] = []
        for row in scored:
            if row.status == "error":  # not graded at all
                continue
            if row.key_unchecked is not None:
                where = missing if row.key_unchecked == "task_missing" else text_changed
                where.append(f"{row.benchmark}/{row.task_id}")
            elif row.run_key is not None:
                regraded += 1
                under_run_key = score_row(row.model_copy(update=row.run_key.model_dump()))
                changed += under_run_key.status != row.status
        return cls(regraded, changed, missing, text_changed)

    def summary(self) -> str | None:
        """The key's effect on the verdicts, when some row was graded by a new key."""
        if not self.regraded:
            return None
        return (
            f"  {self.regraded} row(s) graded by today's key, not the one they ran under: "
            f"{self.verdicts_changed} verdict(s) changed because the key changed"
        )

    def warnings(self) -> list[str]:
        """One line per kind of row today's key could not grade, naming its tasks."""
        lines = []
        for tasks, why in (
            (self.missing, "task is no longer in the task files (removed or renamed)"),
            (self.text_changed, "task's question or turns changed since (rerun them)"),
        ):
            if tasks:
                names = sorted(set(tasks))
                named = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
                lines.append(
                    f"warning: {len(tasks)} row(s) graded by the key they ran under, as their "
                    f"{why}: {named}"
                )
        return lines
