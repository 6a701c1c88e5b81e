"""What a run is made of: the items it runs, which tasks it keeps, what it reports back."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from llm_eval.config.loading import AppConfig
from llm_eval.errors import MissingApiKeyError
from llm_eval.runner.model_client import CallCounters
from llm_eval.runner.stopping import Spend, StopReason
from llm_eval.schemas import ErrorInfo, RowKey, Task


@dataclass(frozen=True)
class WorkItem:
    """One model x task x epoch to run."""

    model: str
    benchmark: str
    task: Task
    epoch: int

    @property
    def key(self) -> RowKey:
        return (self.model, self.benchmark, self.task.id, self.epoch)


@dataclass(frozen=True)
class TaskFilter:
    """Which tasks of each benchmark run."""

    include: frozenset[str] = frozenset()
    exclude: frozenset[str] = frozenset()
    limit: int | None = None

    def apply(self, tasks: list[Task]) -> list[Task]:
        kept = [
            t
            for t in tasks
            if (not self.include or t.category in self.include) and t.category not in self.exclude
        ]
        return kept if self.limit is None else kept[: self.limit]


@dataclass(frozen=True)
class Rerun:
    """A targeted rerun: only these task ids and/or these row keys (e.g. the rows scored
    wrong). Without `--resume` their rows in the results file are replaced; with it, only
    the missing or errored ones among them are run."""

    task_ids: frozenset[str] = frozenset()
    keys: frozenset[RowKey] | None = None

    def selects(self, item: WorkItem) -> bool:
        if self.task_ids and item.task.id not in self.task_ids:
            return False
        return self.keys is None or item.key in self.keys


class ProgressSink(Protocol):
    """Receives progress events; the CLI draws a Rich bar, tests may count."""

    def start(self, totals: dict[str, int]) -> None: ...
    # `task` (the row's key) lets a sink count the tasks retrying right now.
    def row_done(self, model: str, status: str, task: Hashable | None = None) -> None: ...
    def retried(self, model: str, task: Hashable | None = None) -> None: ...


class SilentProgress:
    """A progress sink that shows nothing."""

    def start(self, totals: dict[str, int]) -> None:
        return None

    def row_done(self, model: str, status: str, task: Hashable | None = None) -> None:
        return None

    def retried(self, model: str, task: Hashable | None = None) -> None:
        return None


@dataclass
class RunSummary:
    """What a run did, for the exit code and the console."""

    output: Path
    run_id: str
    rows_written: int = 0
    rows_kept: int = 0
    rows_stale: int = 0
    """Finished rows run again because their task's text changed since they were made."""
    rows_regraded: int = 0
    """Finished rows rescored, not run again, because their task's key changed since."""
    dropped: Counter[tuple[str, str]] = field(default_factory=Counter)
    """Rows removed from the file, per model and benchmark, because their task is no longer
    in its task file."""
    rerun_stale: int = 0
    """Rows a targeted rerun kept although their question changed (`--resume` reruns them)."""
    rerun_unplanned: int = 0
    """Tasks of today's files with no row after a targeted rerun (`--resume` runs them)."""
    statuses: Counter[str] = field(default_factory=Counter)
    calls: CallCounters = field(default_factory=CallCounters)
    first_errors: dict[str, ErrorInfo] = field(default_factory=dict)
    """The first error row of each model, to say what went wrong without opening the trace."""
    stop: StopReason | None = None
    """Why the run stopped before its plan was done (None: it ran every item)."""
    spend: Spend = field(default_factory=Spend)
    planned: dict[str, dict[str, int]] = field(default_factory=dict)
    """Rows the results file should hold when the run is done, per model and benchmark."""
    pending: list[WorkItem] = field(default_factory=list)
    """Items this run was to run and did not finish (a stopped run's missing rows)."""

    def error_share(self) -> float:
        total = sum(self.statuses.values())
        return self.statuses["error"] / total if total else 0.0


def check_api_keys(config: AppConfig, models: list[str]) -> None:
    """Fail before any request when a selected model's key variable is not set."""
    for name in models:
        env = config.models[name].api_key_env
        if env and not os.environ.get(env):
            raise MissingApiKeyError(
                f"model {name!r} needs the environment variable {env} (set it in .env or the "
                "shell); no request was sent"
            )
