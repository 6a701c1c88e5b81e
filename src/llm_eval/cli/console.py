"""Console output of `list-config`: tables of models, benchmarks, prompts and tools."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from llm_eval.config.loading import AppConfig


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
