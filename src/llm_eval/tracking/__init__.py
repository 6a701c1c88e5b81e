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
  mean_latency_s, unsure, strict_accuracy_high, ...), and for `report` `<model>/<metric>`
  (also on the parent): the same numbers as the metrics files, unsure band included;
- the per-task table (`tasks/<model>.json`, `MlflowClient.log_table`); for `report` with two
  or more models or epochs, the per-item table (`items/item_analysis.json`); the trace / scored
  JSONL, metrics JSON, report and charts as artifacts;
- for `run`: one MLflow trace per row, with a span per LLM call and per tool call, written
  after the run in bulk; for `score`: one current `correct` verdict on each row's trace.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
import threading
import time
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from llm_eval.redaction import error_line
from llm_eval.tracking.context import ENV_SWITCH, read_params, tracking_enabled

if TYPE_CHECKING:
    from llm_eval.schemas import RowKey

__all__ = [
    "ENV_SWITCH",
    "exit_process",
    "prepare_tracking",
    "track_stage",
    "tracking_enabled",
    "wait_for_mlflow",
]


def prepare_tracking(
    config_root: Path | str = ".", *, preload: bool = True, needs_mlflow: bool = False
) -> bool:
    """Whether the stage will be tracked; if so, check the store first (an unusable one
    raises `UsageError` within seconds).

    `preload`: start loading MLflow in a background thread, so a stage whose own work is
    local (score, track) hides that second or two. `run` passes False: a thread importing
    MLflow beside the request loop took CPU from it (1.8x the run's CPU in all); MLflow
    loads there only after the last request, to write the record from the rows. Nothing is
    preloaded where the stage will write the local store without MLflow (`sqlite_store`),
    unless the command `needs_mlflow` for more than the writes (`track`'s audit, `review`).
    """
    root = Path(config_root)
    params = read_params(root)
    if not tracking_enabled(root, params):
        return False
    from llm_eval.tracking.context import experiment_name, repo_root, store_locations
    from llm_eval.tracking.preflight import check_store
    from llm_eval.tracking.sqlite_store import open_client

    uri, _ = store_locations(repo_root(root.resolve()))
    check_store(uri)
    lite = open_client(uri, experiment_name(params or {})) if preload and not needs_mlflow else None
    if lite is not None:
        # The local store is written without MLflow (`sqlite_store`): nothing to load.
        lite.close()
        preload = False
    if preload:
        global _loader
        _loader = threading.Thread(target=_load_mlflow, name="load-mlflow", daemon=True)
        _loader.start()
    return True


_loader: threading.Thread | None = None


def wait_for_mlflow() -> None:
    """Let the background import finish before this thread imports MLflow too: two threads
    importing one package's modules in different orders can trip the import lock's deadlock
    check."""
    if _loader is not None:
        _loader.join()


def _load_mlflow() -> None:
    """Import what logging a stage needs (a failure here surfaces, if at all, when logging)."""
    with contextlib.suppress(Exception):
        import mlflow  # noqa: F401
        import mlflow.store.tracking.sqlalchemy_store  # noqa: F401
        import mlflow.tracing.client  # noqa: F401
        import pandas  # noqa: F401  (the task table)


def track_stage(
    stage: str,
    *,
    config_root: Path | str = ".",
    rows_paths: Sequence[Path] = (),
    artifacts: Sequence[Path] = (),
    metrics: Mapping[str, Any] | None = None,
    models: Sequence[str] = (),
    status: str = "FINISHED",
    new_rows: Collection[RowKey] | None = None,
    tables: Mapping[str, Mapping[str, list[Any]]] | None = None,
) -> list[str]:
    """Log one stage execution to MLflow if tracking is on; returns the created run ids.

    `rows_paths`: trace files; each model in them gets its own run with metrics and the task
    table, and the store is reconciled with the rows (`record`): stage `run` writes every
    missing trace, `score` also every verdict. Without rows, one run logs `metrics` (nested
    numbers, flattened to `a/b/c`) and `artifacts`. `status` ends the runs (`KILLED` for an
    interrupted run); `new_rows` are the keys of the rows this stage made (their traces
    are new, not repairs); `tables`: artifact path -> columns, logged as MLflow tables on
    the stage's run (the report's per-item table). Never raises for a tracking failure.
    """
    ended_ms = int(time.time() * 1000)  # the stage's work is done; logging is not the stage
    root = Path(config_root)
    params = read_params(root)
    if not tracking_enabled(root, params):
        return []
    wait_for_mlflow()
    try:
        from llm_eval.tracking.context import build_context
        from llm_eval.tracking.stages import log_stage

        ctx = build_context(stage, root, params or {}, ended_ms=ended_ms)
        return log_stage(
            ctx,
            rows_paths=[Path(p) for p in rows_paths],
            artifacts=[Path(p) for p in artifacts],
            metrics=metrics,
            models=list(models),
            status=status,
            new_rows=new_rows,
            tables=tables,
        )
    except Exception as exc:  # tracking must never fail a stage
        later = ""
        if rows_paths:  # `track` writes the traces (and verdicts) of trace files later
            scored = " --scored" if stage == "score" else ""
            files = " ".join(str(path) for path in rows_paths)
            later = f"; the files are complete, `llm-eval track{scored} {files}` records them later"
        message = error_line(exc)
        print(f"warning: MLflow tracking of stage {stage!r} failed: {message}{later}",
              file=sys.stderr)  # fmt: skip
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
