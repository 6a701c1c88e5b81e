"""The run's progress bar (Rich): one bar per model with error and retry counts.

It satisfies the runner's `ProgressSink` protocol structurally, without importing the runner.
"""

from __future__ import annotations

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)


class RichProgress:
    """One bar per model: done / total, with error and retry counts."""

    def __init__(self, console: Console | None = None) -> None:
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("errors {task.fields[errors]}  retries {task.fields[retries]}"),
            TimeElapsedColumn(),
            console=console or Console(stderr=True),
            transient=False,
        )
        self._ids: dict[str, TaskID] = {}
        self._errors: dict[str, int] = {}
        self._retries: dict[str, int] = {}

    def start(self, totals: dict[str, int]) -> None:
        self.progress.start()
        for model, total in totals.items():
            self._errors[model] = self._retries[model] = 0
            self._ids[model] = self.progress.add_task(model, total=total, errors=0, retries=0)

    def row_done(self, model: str, status: str) -> None:
        if status == "error":
            self._errors[model] += 1
        self.progress.update(self._ids[model], advance=1, errors=self._errors[model])

    def retried(self, model: str) -> None:
        self._retries[model] += 1
        self.progress.update(self._ids[model], retries=self._retries[model])

    def stop(self) -> None:
        self.progress.stop()
