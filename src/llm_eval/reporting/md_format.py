"""Formatting of the Markdown report: numbers, intervals, unsure bands and escaped tables.

Uniform everywhere: accuracy as a percent with one decimal, intervals as `[lo–hi]` in
percent, a band as `low–high%`, unknown values as `n/a` (never 0).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from llm_eval.reporting.escape import md_text, table_cell

CELL_CAP = 80
"""Longest free-text cell (answers, error messages) before it is cut with an ellipsis."""


def fmt_pct(value: float | None) -> str:
    """A proportion as a percent with one decimal, `n/a` when unknown."""
    return "n/a" if is_missing(value) else f"{100 * float(value):.1f}%"  # type: ignore[arg-type]


def fmt_interval(lo: float | None, hi: float | None) -> str:
    """A proportion interval in percent, e.g. `[81.2–95.3]`."""
    if is_missing(lo) or is_missing(hi):
        return "[n/a]"
    return f"[{100 * float(lo):.1f}–{100 * float(hi):.1f}]"  # type: ignore[arg-type]


def fmt_accuracy(value: float | None, lo: float | None, hi: float | None) -> str:
    """Accuracy followed by its interval: `92.6% [86.0–96.2]`."""
    return "n/a" if is_missing(value) else f"{fmt_pct(value)} {fmt_interval(lo, hi)}"


def fmt_cell(row: Mapping[str, Any]) -> str:
    """A result cell: `correct / total, accuracy [lo–hi]`, plus the error count and the
    unsure band if any."""
    text = f"{int(row['correct'])} / {int(row['total'])}, "
    text += fmt_accuracy(row["strict_accuracy"], row["strict_lo"], row["strict_hi"])
    text += f" ({int(row['errors'])} err)" if int(row["errors"]) else ""
    return text + band_note(row.get("unsure"), row.get("strict_high"))


def fmt_band(low: float | None, high: float | None) -> str:
    """An accuracy band in percent, `85.2–88.0%`; one value when it is no band at all."""
    if is_missing(low) or is_missing(high):
        return "n/a"
    if f"{100 * float(low):.1f}" == f"{100 * float(high):.1f}":  # type: ignore[arg-type]
        return fmt_pct(low)
    return f"{100 * float(low):.1f}–{fmt_pct(high)}"  # type: ignore[arg-type]


def band_note(unsure: Any, high: float | None) -> str:
    """` (3 unsure, up to 88.0%)` after an accuracy whose group has unsure rows, else ``."""
    count = 0 if is_missing(unsure) else int(unsure)
    return f" ({count} unsure, up to {fmt_pct(high)})" if count else ""


def fmt_int(value: float | None) -> str:
    """An integer count with thousands separators, `n/a` when unknown."""
    return "n/a" if is_missing(value) else f"{int(round(float(value))):,}"  # type: ignore[arg-type]


def fmt_seconds(value: float | None) -> str:
    """A duration in seconds with two decimals."""
    return "n/a" if is_missing(value) else f"{float(value):.2f} s"  # type: ignore[arg-type]


def fmt_cost(value: float | None, unknown_rows: int = 0) -> str:
    """A USD cost; `n/a` when no row knows its cost, `(partial)` when only some do."""
    if is_missing(value):
        return "n/a"
    text = f"${float(value):.4f}"  # type: ignore[arg-type]
    return f"{text} (partial)" if unknown_rows else text


def fmt_diff(diff: float | None, lo: float | None, hi: float | None) -> str:
    """An accuracy difference in percentage points with its interval."""
    if is_missing(diff):
        return "n/a"
    return f"{100 * float(diff):+.1f} pp {fmt_interval(lo, hi)}"  # type: ignore[arg-type]


def fmt_p(value: float) -> str:
    """A p-value with four decimals, floored at `<0.0001`."""
    return "<0.0001" if value < 0.0001 else f"{value:.4f}"


def is_missing(value: Any) -> bool:
    """None or NaN (pandas turns None into NaN in numeric columns)."""
    return value is None or (isinstance(value, float) and value != value)


def escape(text: Any) -> str:
    """Outside text (a label, a name, an id) as Markdown text: no markup, on one line, cut
    at `CELL_CAP` characters."""
    return md_text(text, CELL_CAP)


def md_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A GitHub Markdown table of Markdown cells (outside text goes in through `escape` or
    `md_code`); each cell is kept on one line with its `|` escaped."""
    lines = [_md_row(headers), "|" + "|".join("---" for _ in headers) + "|"]
    lines += [_md_row(row) for row in rows]
    return "\n".join(lines)


def _md_row(cells: Sequence[Any]) -> str:
    """One table row."""
    return "| " + " | ".join(table_cell(str(cell)) for cell in cells) + " |"


FOLD_AFTER = 12
"""Longest list of ids shown inline; a longer one is folded under `<details>`."""


def fold_list(label: str, items: Sequence[str]) -> str:
    """`label: a, b, c`, or the label as the summary of a folded block when the list is long
    (hundreds of task ids would otherwise bury the table after them)."""
    listed = ", ".join(items)
    if len(items) <= FOLD_AFTER:
        return f"{label}: {listed}"
    return f"<details><summary>{label}</summary>\n\n{listed}\n\n</details>"
