"""Console output of `list-config`: tables of models, benchmarks, prompts and tools, and
each benchmark's task categories. rich loads inside the functions (start-up stays fast).
"""

from __future__ import annotations

from llm_eval.config.loading import AppConfig
from llm_eval.providers.registry import is_simulated
from llm_eval.redaction import redact
from llm_eval.schemas import ToolConfig


def print_config(config: AppConfig, task_counts: dict[str, int]) -> None:
    """Borderless tables that fit 80 columns: long values go on a second line, not an ellipsis."""
    from rich import box
    from rich.console import Console, Group
    from rich.markup import escape
    from rich.table import Table
    from rich.text import Text

    def table(title: str, *columns: str) -> Table:
        grid = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, show_edge=False,
                     padding=0)  # columns apart by one space  # fmt: skip
        for index, column in enumerate(columns):  # names stay whole; other values fold
            grid.add_column(column, overflow="fold", no_wrap=index == 0)
        return grid

    models = table("Models", "model / label", "model string / provider, key variable")
    models.columns[0].no_wrap = False  # the name stays whole (no_wrap Text), the label wraps
    for name, model in config.models.items():
        label = redact(model.label or "") + (" (simulated)" if is_simulated(model) else "")
        key = f", key {model.api_key_env}" if model.api_key_env else ""
        models.add_row(
            Group(Text(name, style="bold", no_wrap=True), Text(label, style="dim")),
            Group(Text(model.model), Text(model.provider + key, style="dim")),
        )
    benchmarks = table("Benchmarks", "benchmark", "tasks", "flow", "scorer", "prompt")
    benchmarks.columns[1].justify = "right"
    for name, bench in config.benchmarks.items():
        shown = escape(name) if bench.active else f"{escape(name)} [dim](inactive)[/]"
        benchmarks.add_row(shown, str(task_counts.get(name, "?")), bench.resolved_flow,
                           bench.scorer, bench.prompt)  # fmt: skip
    console = Console()
    prompts = table("Prompts", "prompt", "follow-ups", "system")
    # The system prompt gets one line, cut to the width the other two columns leave.
    room = console.width - max(map(len, config.prompts), default=0) - len("follow-ups") - 2
    for name, prompt in config.prompts.items():
        system = Text(" ".join((prompt.system or "").split()), no_wrap=True)
        system.truncate(max(room, 10), overflow="ellipsis")
        prompts.add_row(name, str(len(prompt.followups)), system)
    tools = table("Tools", "tool", "enabled", "settings")
    for name, tool in config.tools.items():
        tools.add_row(name, str(tool.enabled), escape(_tool_settings(name, tool).summary()))
    for grid in (models, benchmarks, prompts, tools):
        console.print(grid)
        console.print()
    active = config.active_benchmarks()
    console.print(
        f"{len(active)} active benchmarks, {sum(task_counts.get(b, 0) for b in active)} tasks"
    )


def _tool_settings(name: str, entry: ToolConfig) -> ToolConfig:
    """The entry as its tool reads it (python_exec's limits with their defaults)."""
    from llm_eval.tools.registry import registered_tool_names, tool_settings

    return tool_settings(name, entry) if name in registered_tool_names() else entry


def print_categories(config: AppConfig) -> None:
    """Each benchmark's task categories (what --include / --exclude accept) and task counts."""
    from collections import Counter

    from rich.columns import Columns
    from rich.console import Console
    from rich.padding import Padding
    from rich.text import Text

    from llm_eval.config.task_files import read_task_file

    console = Console()
    for name, bench in config.benchmarks.items():
        task_file = read_task_file(config.benchmark_path(name), expected_type=bench.task_type)
        counts = Counter(loaded.task.category for loaded in task_file.tasks)
        status = "" if bench.active else ", inactive"
        console.print(Text(f"{name} ({len(task_file.tasks)} tasks{status})", style="bold"))
        cells = [
            Text(f"{category} {count}", no_wrap=True) for category, count in sorted(counts.items())
        ]
        console.print(Padding(Columns(cells, padding=(0, 3)), (0, 0, 0, 2)))
