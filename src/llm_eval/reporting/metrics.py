"""Per-benchmark and per-model metrics of scored rows, as the flat JSON DVC and MLflow track.

Both accuracies come from `statistics.accuracy_summary`, the one place that defines them:
`strict_accuracy` = correct / total (an error row counts as not correct) and
`valid_accuracy` = correct / (correct + incorrect) (error rows left out).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from llm_eval.reporting.statistics import accuracy_summary
from llm_eval.schemas import TraceRow


def benchmark_metrics(rows: Iterable[TraceRow]) -> dict[str, Any]:
    """{benchmark: metrics, ..., "overall": metrics} of one model's (or any) rows."""
    groups: dict[str, list[TraceRow]] = defaultdict(list)
    for row in rows:
        groups[row.benchmark].append(row)
        groups["overall"].append(row)
    return {
        name: row_metrics(groups[name])
        for name in sorted(groups, key=lambda n: (n == "overall", n))
    }


def summary_metrics(rows: Iterable[TraceRow]) -> dict[str, Any]:
    """{model: overall metrics} over scored rows: the report stage's metrics file."""
    by_model: dict[str, list[TraceRow]] = defaultdict(list)
    for row in rows:
        by_model[row.model].append(row)
    return {model: row_metrics(model_rows) for model, model_rows in by_model.items()}


def row_metrics(rows: list[TraceRow]) -> dict[str, Any]:
    """Counts, both accuracies with 95% Wilson intervals, tokens and mean latency of rows."""
    summary = accuracy_summary(
        sum(row.status == "correct" for row in rows),
        sum(row.status == "incorrect" for row in rows),
        sum(row.status == "error" for row in rows),
    )
    tokens = [row.usage.total_tokens for row in rows if row.usage.total_tokens is not None]
    latencies = [
        row.latency_s for row in rows if row.latency_s is not None and row.status != "error"
    ]
    return {
        "strict_accuracy": _rounded(summary.strict_accuracy),
        "strict_ci_low": _rounded(summary.strict_interval[0]),
        "strict_ci_high": _rounded(summary.strict_interval[1]),
        "valid_accuracy": _rounded(summary.valid_accuracy),
        "valid_ci_low": _rounded(summary.valid_interval[0]),
        "valid_ci_high": _rounded(summary.valid_interval[1]),
        "correct": summary.correct,
        "incorrect": summary.incorrect,
        "errors": summary.errors,
        "total": summary.total,
        "tokens": sum(tokens) if tokens else None,
        "mean_latency_s": _rounded(sum(latencies) / len(latencies)) if latencies else None,
    }


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 6)
