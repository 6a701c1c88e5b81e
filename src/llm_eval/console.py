"""Console output: the config listing and the run progress bar (Rich)."""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from llm_eval.config import AppConfig
from llm_eval.runner import ProgressSink


def print_config(config: AppConfig, task_counts: dict[str, int]) -> None:
    """Tables of models, benchmarks with task counts, prompts and tools."""
    console = Console()
    models = Table("model", "provider", "model string", "key variable", "label", title="Models")
    for name, model in config.models.items():
        label = (model.label or "") + (" (simulated)" if model.simulated else "")
        models.add_row(name, model.provider, model.model, model.api_key_env or "-", label)
    benchmarks = Table("benchmark", "tasks", "type", "flow", "scorer", "prompt", "active",
                       title="Benchmarks")  # fmt: skip
    for name, bench in config.benchmarks.items():
        count = str(task_counts.get(name, "?"))
        benchmarks.add_row(name, count, bench.task_type, bench.resolved_flow, bench.scorer,
                           bench.prompt, str(bench.active))  # fmt: skip
    prompts = Table("prompt", "follow-ups", "system", title="Prompts")
    for name, prompt in config.prompts.items():
        prompts.add_row(name, str(len(prompt.followups)), (prompt.system or "")[:70])
    tools = Table("tool", "enabled", "timeout s", "memory MB", title="Tools")
    for name, tool in config.tools.items():
        tools.add_row(name, str(tool.enabled), str(tool.timeout_s), str(tool.memory_mb))
    for table in (models, benchmarks, prompts, tools):
        console.print(table)
    active = config.active_benchmarks()
    console.print(
        f"{len(active)} active benchmarks, {sum(task_counts.get(b, 0) for b in active)} tasks"
    )


class RichProgress(ProgressSink):
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
        self._ids: dict[str, int] = {}
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
