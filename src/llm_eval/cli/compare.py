"""`llm-eval compare A B`: two runs side by side, paired task by task, in one report."""

from __future__ import annotations

from pathlib import Path

from llm_eval.errors import UsageError
from llm_eval.runner.trace_io import read_rows
from llm_eval.schemas import TraceRow


def tag_rows(rows: list[TraceRow], tag: str) -> list[TraceRow]:
    """Suffix every model with the run's tag, so one model in two runs becomes two columns."""
    return [
        row.model_copy(
            update={"model": f"{row.model} [{tag}]", "model_label": f"{row.model_label} [{tag}]"}
        )
        for row in rows
    ]


def run_tags(first: Path, second: Path) -> tuple[str, str]:
    """Short names for the two runs: their file names, or A / B when those are equal."""
    if first.stem != second.stem:
        return first.stem, second.stem
    return "A", "B"


def execute_compare(first: Path, second: Path, output: Path | None) -> int:
    """Render the report over both runs; the paired table compares them on shared tasks."""
    from llm_eval.reporting.markdown import render_report

    for path in (first, second):
        if not path.is_file():
            raise UsageError(f"compare: no such file {path}")
    tag_a, tag_b = run_tags(first, second)
    rows = tag_rows(read_rows(first), tag_a) + tag_rows(read_rows(second), tag_b)
    if not rows:
        raise UsageError("compare: the two files hold no rows")
    text = render_report(rows, title=f"Comparison: {first} [{tag_a}] vs {second} [{tag_b}]")
    if output is None:
        print(text)
    else:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text, encoding="utf-8")
        print(f"wrote {output} ({len(rows)} rows)")
    return 0
