"""The run's progress bar (Rich): one bar per model with its rate, time left, retries in
flight, failed calls and error rows.

A failed call that will be retried counts at once under `failed calls`, so a struggling
provider shows while its tasks are still retrying, not only once one of them gives up (an
`error row`). `retrying` is the number of the model's tasks between a failed call and their
end. It satisfies the runner's `ProgressSink` protocol structurally, without importing the
runner.
"""

from __future__ import annotations

from collections.abc import Hashable

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text


class RateColumn(ProgressColumn):
    """Rows finished per second, over Rich's recent window; `–/s` before there is one."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text("–/s" if speed is None else f"{speed:.1f}/s")


def _stderr_console() -> Console:
    """Rich's console on stderr. A log (not a terminal) has no width to fit, and Rich's
    default of 80 columns would cut the bar's counts to `18…`: give it room for them."""
    import sys

    return Console(stderr=True, width=None if sys.stderr.isatty() else 160)


class RichProgress:
    """One bar per model: done / total, rate, time left, retrying, failed calls, error rows."""

    def __init__(self, console: Console | None = None) -> None:
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            RateColumn(),
            TimeRemainingColumn(compact=True),
            TextColumn("left"),
            TextColumn(
                "retrying {task.fields[retrying]}  failed calls {task.fields[failed]}  "
                "error rows {task.fields[errors]}"
            ),
            TimeElapsedColumn(),
            console=console or _stderr_console(),
            transient=False,
        )
        self._ids: dict[str, TaskID] = {}
        self._errors: dict[str, int] = {}
        self._failed: dict[str, int] = {}
        self._retrying: dict[str, set[Hashable]] = {}

    def start(self, totals: dict[str, int]) -> None:
        self.progress.start()
        for model, total in totals.items():
            self._errors[model] = self._failed[model] = 0
            self._retrying[model] = set()
            self._ids[model] = self.progress.add_task(
                model, total=total, errors=0, failed=0, retrying=0
            )

    def row_done(self, model: str, status: str, task: Hashable | None = None) -> None:
        if status == "error":
            self._errors[model] += 1
        self._retrying[model].discard(task)
        self._show(model, advance=1)

    def retried(self, model: str, task: Hashable | None = None) -> None:
        """A call of `task` failed and will be tried again."""
        self._failed[model] += 1
        if task is not None:
            self._retrying[model].add(task)
        self._show(model)

    def _show(self, model: str, advance: int = 0) -> None:
        self.progress.update(
            self._ids[model],
            advance=advance,
            errors=self._errors[model],
            failed=self._failed[model],
            retrying=len(self._retrying[model]),
        )

    def stop(self) -> None:
        self.progress.stop()
