"""Metrics of scored rows: a small flat headline per model (what `dvc exp show` and
`dvc metrics diff` compare), per-benchmark detail, and the per-model records DVC plots.

Both accuracies come from `statistics.accuracy_summary`, the one place that defines them:
`strict_accuracy` = correct / total (an error row counts as not correct) and
`valid_accuracy` = correct / (correct + incorrect + unsure) (error rows left out). Both
count sure-correct rows only; `unsure` rows (the rules could not settle them) give each its
band, up to `strict_accuracy_high` / `valid_accuracy_high` were every unsure row right.
Each accuracy carries its 95% Wilson interval (`strict_ci_low` .. `strict_ci_high`), and the
headline the smallest difference this suite can resolve at that accuracy
(`min_detectable_diff`), so `dvc metrics diff` shows whether a change is real.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from llm_eval.redaction import redact
from llm_eval.reporting.escape import json_for_html, plot_label
from llm_eval.reporting.statistics import (
    accuracy_summary,
    minimum_detectable_difference,
    percentile,
)
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


HEADLINE_KEYS = (
    "strict_accuracy",
    "strict_ci_low",
    "strict_ci_high",
    "strict_accuracy_high",
    "valid_accuracy",
    "valid_ci_low",
    "valid_ci_high",
    "min_detectable_diff",
    "unsure",
    "errors",
    "tokens",
    "cost_usd",
    "p50_latency_s",
)
"""One model's headline, in this order: `results/metrics/<model>.json` and the MLflow runs."""

COMPARED_KEYS = (
    "strict_accuracy",
    "strict_ci_low",
    "strict_ci_high",
    "strict_accuracy_high",
    "min_detectable_diff",
    "cost_usd",
    "p50_latency_s",
)
"""The part of the headline declared as DVC metrics (`results/summary.json`): what a user
compares across experiments, the headline accuracy with its interval, the top of its unsure
band and the difference the suite resolves, seven per model so `dvc exp show` stays within
60 columns. The rest (the valid accuracy and its interval, unsure, errors, tokens) is in
`results/metrics/<model>.json` and on the MLflow runs."""


def headline_metrics(
    rows: Iterable[TraceRow], overall: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The flat headline of one model's rows (`HEADLINE_KEYS`); `overall` is their
    `row_metrics` when the caller has it already."""
    rows = list(rows)
    detail = overall if overall is not None else row_metrics(rows)
    costs = [row.usage.cost_usd for row in rows if row.usage.cost_usd is not None]
    # Paired comparisons are over tasks, not rows: epochs of one task are one pair.
    tasks = len({(row.benchmark, row.task_id) for row in rows})
    detectable = minimum_detectable_difference(tasks, detail["strict_accuracy"] or 0.0)
    return {
        "strict_accuracy": detail["strict_accuracy"],
        "strict_ci_low": detail["strict_ci_low"],
        "strict_ci_high": detail["strict_ci_high"],
        "strict_accuracy_high": detail["strict_accuracy_high"],
        "valid_accuracy": detail["valid_accuracy"],
        "valid_ci_low": detail["valid_ci_low"],
        "valid_ci_high": detail["valid_ci_high"],
        "min_detectable_diff": _rounded(detectable),
        "unsure": detail["unsure"],
        "errors": detail["errors"],
        "tokens": detail["tokens"],
        "cost_usd": _rounded(sum(costs)) if costs else None,
        "p50_latency_s": detail["p50_latency_s"],
    }


def summary_metrics(rows: Iterable[TraceRow]) -> dict[str, Any]:
    """{model: headline} over scored rows: what the report stage logs to MLflow."""
    return {model: headline_metrics(group) for model, group in _by_model(rows).items()}


def compared_metrics(summary: dict[str, Any]) -> dict[str, Any]:
    """{model: the `COMPARED_KEYS` of its headline}: the report stage's DVC metrics file."""
    return {model: {key: head[key] for key in COMPARED_KEYS} for model, head in summary.items()}


def plot_records(rows: Iterable[TraceRow]) -> list[dict[str, Any]]:
    """One record per model for DVC's data plots: accuracy with its interval, cost, latency.

    The label goes through `plot_label`: DVC copies it into a `<script>` of its page."""
    records = []
    for model, group in _by_model(rows).items():
        detail = row_metrics(group)
        headline = headline_metrics(group, detail)
        records.append(
            {
                "model": plot_label(redact(group[0].model_label or model)),
                "strict_accuracy": detail["strict_accuracy"],
                "strict_accuracy_high": detail["strict_accuracy_high"],
                "unsure": detail["unsure"],
                "ci_low": detail["strict_ci_low"],
                "ci_high": detail["strict_ci_high"],
                "cost_usd": headline["cost_usd"],  # unknown stays null: no point at $0
                "p50_latency_s": headline["p50_latency_s"],
            }
        )
    return records


def write_plot_data(path: Path, rows: Iterable[TraceRow]) -> None:
    """Write `plot_records` as JSON (DVC reads it and inlines it in `dvc plots show`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json_for_html(plot_records(rows)), encoding="utf-8")


def _by_model(rows: Iterable[TraceRow]) -> dict[str, list[TraceRow]]:
    by_model: dict[str, list[TraceRow]] = defaultdict(list)
    for row in rows:
        by_model[row.model].append(row)
    return dict(by_model)


def row_metrics(rows: list[TraceRow]) -> dict[str, Any]:
    """Counts, both accuracies with 95% Wilson intervals and the tops of their bands,
    tokens and mean latency of rows."""
    summary = accuracy_summary(
        sum(row.status == "correct" for row in rows),
        sum(row.status == "incorrect" for row in rows),
        sum(row.status == "error" for row in rows),
        unsure=sum(row.status == "unsure" for row in rows),
    )
    tokens = [row.usage.total_tokens for row in rows if row.usage.total_tokens is not None]
    latencies = [
        row.latency_s for row in rows if row.latency_s is not None and row.status != "error"
    ]
    return {
        "strict_accuracy": _rounded(summary.strict_accuracy),
        "strict_ci_low": _rounded(summary.strict_interval[0]),
        "strict_ci_high": _rounded(summary.strict_interval[1]),
        "strict_accuracy_high": _rounded(summary.strict_high),
        "valid_accuracy": _rounded(summary.valid_accuracy),
        "valid_ci_low": _rounded(summary.valid_interval[0]),
        "valid_ci_high": _rounded(summary.valid_interval[1]),
        "valid_accuracy_high": _rounded(summary.valid_high),
        "correct": summary.correct,
        "incorrect": summary.incorrect,
        "errors": summary.errors,
        "unsure": summary.unsure,
        "total": summary.total,
        "tokens": sum(tokens) if tokens else None,
        "mean_latency_s": _rounded(sum(latencies) / len(latencies)) if latencies else None,
        "p50_latency_s": _rounded(percentile(latencies, 50)) if latencies else None,
    }


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 6)
