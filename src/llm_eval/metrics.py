"""Per-benchmark metrics of scored rows, as the flat JSON that DVC and MLflow track."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from llm_eval.schemas import TraceRow


def benchmark_metrics(rows: Iterable[TraceRow]) -> dict[str, Any]:
    """{benchmark: {correct, incorrect, errors, total, accuracy, strict_accuracy, ...}, overall}."""
    from llm_eval.statistics import wilson_interval

    groups: dict[str, list[TraceRow]] = defaultdict(list)
    for row in rows:
        groups[row.benchmark].append(row)
        groups["overall"].append(row)
    result: dict[str, Any] = {}
    for name in sorted(groups, key=lambda n: (n == "overall", n)):
        result[name] = _summary(groups[name], wilson_interval)
    return result


def _summary(rows: list[TraceRow], wilson: Any) -> dict[str, Any]:
    correct = sum(row.status == "correct" for row in rows)
    errors = sum(row.status == "error" for row in rows)
    valid = len(rows) - errors
    low, high = wilson(correct, valid)
    tokens = [row.usage.total_tokens for row in rows if row.usage.total_tokens is not None]
    latencies = [
        row.latency_s for row in rows if row.latency_s is not None and row.status != "error"
    ]
    return {
        "total": len(rows),
        "correct": correct,
        "incorrect": valid - correct,
        "errors": errors,
        "accuracy": round(correct / valid, 6) if valid else None,
        "accuracy_ci_low": round(low, 6),
        "accuracy_ci_high": round(high, 6),
        "strict_accuracy": round(correct / len(rows), 6) if rows else None,
        "tokens": sum(tokens) if tokens else None,
        "mean_latency_s": round(sum(latencies) / len(latencies), 6) if latencies else None,
    }
