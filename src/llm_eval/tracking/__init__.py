"""MLflow tracking of pipeline stages (`validate`, `run`, `score`, `report`).

`track_stage` is the one entry point the commands call, after their files are written. It is
cheap when tracking is off (no MLflow import) and never fails the stage: a tracking error is
printed as a warning and the command carries on.

What is logged where (one MLflow run per stage execution, nested under a parent run that every
stage of one `dvc repro` / `dvc exp run` shares):

- tags `llm_eval.stage`, `llm_eval.model`, `git.commit`, `dvc.exp_name`, `dvc.stage`,
  `llm_eval.pipeline_key` (the parent's key) and `mlflow.parentRunId`;
- params: the model's settings flattened (`model.*`), `runner.*`, `run.benchmarks`, with
  anything named like a key, token or secret left out and every value redacted;
- metrics `<benchmark>/<metric>` (accuracy, strict_accuracy, correct, errors, total, tokens,
  mean_latency_s, ...), and for `report` `<model>/<metric>` (also on the parent);
- the per-task table (`tasks/<model>.json`, `MlflowClient.log_table`), the trace / scored
  JSONL, metrics JSON, report and charts as artifacts;
- for `run`: one MLflow trace per row, with a span per LLM call and per tool call.
"""

from __future__ import annotations

import atexit
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

from llm_eval.redaction import error_line
from llm_eval.tracking.context import ENV_SWITCH, read_params, tracking_enabled

__all__ = ["ENV_SWITCH", "exit_process", "track_stage", "tracking_enabled"]


def track_stage(
    stage: str,
    *,
    config_root: Path | str = ".",
    rows_paths: Sequence[Path] = (),
    artifacts: Sequence[Path] = (),
    metrics: Mapping[str, Any] | None = None,
    models: Sequence[str] = (),
    live_runs: Mapping[str, str] | None = None,
) -> list[str]:
    """Log one stage execution to MLflow if tracking is on; returns the created run ids.

    `rows_paths`: trace files; each model in them gets its own run with metrics, the task
    table and (stage `run`) one trace per row, unless `live_runs` names the run a
    `live.LiveTraces` child already opened and filled with the model's traces. Without rows,
    one run logs `metrics` (nested numbers, flattened to `a/b/c`) and `artifacts`. Never
    raises for a tracking failure.
    """
    root = Path(config_root)
    params = read_params(root)
    if not tracking_enabled(root, params):
        return []
    try:
        from llm_eval.tracking.context import build_context
        from llm_eval.tracking.stages import log_stage

        ctx = build_context(stage, root, params or {})
        return log_stage(
            ctx,
            rows_paths=[Path(p) for p in rows_paths],
            artifacts=[Path(p) for p in artifacts],
            metrics=metrics,
            models=list(models),
            live_runs=live_runs,
        )
    except Exception as exc:  # tracking must never fail a stage
        message = error_line(exc)
        print(f"warning: MLflow tracking of stage {stage!r} failed: {message}", file=sys.stderr)
        return []


def exit_process(code: int) -> NoReturn:
    """End the process with `code`; once MLflow is loaded, without the module teardown.

    Tearing down MLflow's and SQLAlchemy's modules at exit takes most of a second, on every
    tracked command. Exit handlers still run and the standard streams are flushed; callers
    have closed their files and committed their store writes by then.
    """
    if "mlflow" not in sys.modules:
        sys.exit(code)
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
