"""Glue between the CLI and the DVC pipeline: file layout, validation JSON, summary metrics.

`dvc.yaml` cannot build a dependency list from `run.models`, so `llm-eval report
--from-params` reads the model list from params.yaml and finds each model's scored file at
the fixed place the `score` stage writes it. Nothing here imports a heavy library.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from llm_eval.errors import UsageError

if TYPE_CHECKING:
    from llm_eval.schemas import TraceRow
    from llm_eval.validation import ValidationReport

TRACES_DIR = Path("results/traces")
SCORED_DIR = Path("results/scored")
METRICS_DIR = Path("results/metrics")

SUMMARY_KEYS = (
    "accuracy",
    "strict_accuracy",
    "accuracy_ci_low",
    "accuracy_ci_high",
    "correct",
    "incorrect",
    "errors",
    "total",
    "tokens",
    "mean_latency_s",
)


def pipeline_models(config_root: Path) -> list[str]:
    """`run.models` from params.yaml under `config_root`, in order, without duplicates."""
    from llm_eval.config import raw_params

    run = raw_params(config_root).get("run") or {}
    models = run.get("models") or []
    if not isinstance(models, list) or not all(isinstance(name, str) for name in models):
        raise UsageError("--from-params: run.models in params.yaml must be a list of names")
    if not models:
        raise UsageError("--from-params: run.models in params.yaml is empty")
    return list(dict.fromkeys(models))


def scored_paths(config_root: Path) -> list[Path]:
    """The scored trace file of every pipeline model, relative to `config_root`."""
    return [config_root / SCORED_DIR / f"{name}.jsonl" for name in pipeline_models(config_root)]


def validation_summary(report: ValidationReport) -> dict[str, Any]:
    """What `validate --json` writes: the suite's shape and every problem, no absolute path.

    Only the static suite (configs/ and data/) goes in, so the file changes only when they do
    and the `run` stages that depend on it do not rerun for a model-settings change.
    """
    config = report.config
    benchmarks: dict[str, Any] = {}
    active: list[str] = []
    if config is not None:
        active = config.active_benchmarks()
        for name, bench in config.benchmarks.items():
            benchmarks[name] = {
                "tasks": report.task_counts.get(name, 0),
                "task_type": bench.task_type,
                "scorer": bench.scorer,
                "active": bench.active,
            }
    return {
        "ok": report.ok,
        "problems": [_relative_problem(str(problem), config) for problem in report.problems],
        "benchmarks": benchmarks,
        "active_benchmarks": active,
        "active_tasks": sum(report.task_counts.get(name, 0) for name in active),
        "prompts": sorted(config.prompts) if config is not None else [],
        "tools": sorted(config.tools) if config is not None else [],
    }


def _relative_problem(text: str, config: Any) -> str:
    root = str(config.root) + "/" if config is not None else ""
    return text.replace(root, "") if root else text


def summary_metrics(rows: Iterable[TraceRow]) -> dict[str, Any]:
    """{model: overall metrics} over scored rows: the report stage's metrics file."""
    from llm_eval.metrics import benchmark_metrics

    by_model: dict[str, list[TraceRow]] = {}
    for row in rows:
        by_model.setdefault(row.model, []).append(row)
    summary: dict[str, Any] = {}
    for model, model_rows in by_model.items():
        overall = benchmark_metrics(model_rows)["overall"]
        summary[model] = {key: overall.get(key) for key in SUMMARY_KEYS}
    return summary


def write_validation(report: ValidationReport, path: Path, config_root: Path) -> None:
    """Write `validate --json` output, then track the `validate` stage (if tracking is on)."""
    from llm_eval.trace_io import dump_json
    from llm_eval.tracking import track_stage

    summary = validation_summary(report)
    dump_json(path, summary)
    metrics = {
        "ok": summary["ok"],
        "problems": len(summary["problems"]),
        "active_tasks": summary["active_tasks"],
        "tasks": {name: info["tasks"] for name, info in summary["benchmarks"].items()},
    }
    track_stage("validate", config_root=config_root, artifacts=[path], metrics=metrics)


def track_report(
    rows: list[TraceRow], report: Path, charts: list[Path], summary: Path | None, config_root: Path
) -> None:
    """Write the summary metrics (if asked), then track the `report` stage."""
    from llm_eval.trace_io import dump_json
    from llm_eval.tracking import track_stage

    metrics = summary_metrics(rows)
    if summary is not None:
        dump_json(summary, metrics)
    artifacts = [report, *charts, *([summary] if summary is not None else [])]
    models = list(dict.fromkeys(row.model for row in rows))
    track_stage(
        "report", config_root=config_root, artifacts=artifacts, metrics=metrics, models=models
    )
