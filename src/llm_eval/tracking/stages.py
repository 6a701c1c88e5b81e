"""Log one stage execution to MLflow: a run per model (run, score) or one run (validate,
report), nested under the pipeline's parent run. Imported only when tracking is on.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import time
from collections.abc import Collection, Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from llm_eval.redaction import redact
from llm_eval.tracking import store
from llm_eval.tracking.context import StageContext, flatten, safe_params, stage_params
from llm_eval.tracking.sqlite_store import MetricValue

if TYPE_CHECKING:
    from llm_eval.schemas import RowKey, TraceRow
    from llm_eval.tracking.store import RecordClient

TRACE_STAGES = frozenset({"run"})
"""Stages whose rows become MLflow traces (the ones that called the models)."""

VERDICT_STAGES = frozenset({"score"})
"""Stages whose verdicts are logged as assessments on the rows' traces (writing any trace
still missing first)."""


HTTP_BOUNDS = {
    "MLFLOW_HTTP_REQUEST_TIMEOUT": "10",
    "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "2",
    "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1",
}
"""MLflow's HTTP settings for a tracking server, unless the environment sets its own.

MLflow's defaults (120 s per request, 7 retries with backoff) held a stage whose server
accepted connections and never answered for 20 minutes. With these, one request gives up
after about 32 s (three tries of 10 s), the stage's logging stops at its first failure, and
the stage ends with one warning line; `llm-eval track` writes the record later."""


def quiet_mlflow() -> None:
    """Bound MLflow's HTTP calls and keep its chatter out of the stage's output.

    Call before the first MLflow call: it imports MLflow, which sets up its loggers at
    import, and only then sets their levels.
    """
    os.environ.setdefault("MLFLOW_LOGGING_LEVEL", "WARNING")
    for name, value in HTTP_BOUNDS.items():
        os.environ.setdefault(name, value)
    import mlflow  # noqa: F401

    for name in ("mlflow", "alembic", "sqlalchemy"):
        logging.getLogger(name).setLevel(logging.WARNING)
    # A locked or failing database: MLflow logs the SQLAlchemy traceback at ERROR, then raises
    # the error, which the caller retries (`store.with_retry`, one line about the lock) or
    # reports in one warning line. The traceback adds nothing but noise.
    logging.getLogger("mlflow.store.db.utils").setLevel(logging.CRITICAL)
    # urllib3 announces every retry of a request that timed out.
    logging.getLogger("urllib3").setLevel(logging.ERROR)


def log_stage(
    ctx: StageContext,
    *,
    rows_paths: Sequence[Path],
    artifacts: Sequence[Path],
    metrics: Mapping[str, Any] | None,
    models: Sequence[str],
    status: str = "FINISHED",
    new_rows: Collection[RowKey] | None = None,
    tables: Mapping[str, Mapping[str, list[Any]]] | None = None,
) -> list[str]:
    """Log the stage under the store lock; returns the ids of the runs it created.

    `status`: how the stage's runs end (`KILLED` for an interrupted `run`); `new_rows`: the
    keys of the rows this stage made (see `record.reconcile_traces`); `tables`: artifact
    path -> columns, logged with `log_table` on a stage's single run (the report's item table).
    """
    with store.store_lock(store.lock_directory(ctx)), _store_client(ctx) as client:
        exp_id = store.experiment_id(client, ctx)
        parent = store.parent_run_id(client, exp_id, ctx)
        if rows_paths:
            run_ids = _log_model_runs(
                client, ctx, exp_id, parent, rows_paths, artifacts, status, new_rows
            )
        else:
            run_ids = [
                _log_plain_run(client, ctx, exp_id, parent, artifacts, metrics, models, tables)
            ]
            if ctx.stage == "report" and metrics:
                store.log_batch(client, parent, metrics=_metric_list(metrics))
        store.touch_parent(client, parent, ctx.ended_ms)
    return run_ids


@contextlib.contextmanager
def _store_client(ctx: StageContext) -> Iterator[RecordClient]:
    """The stage's client; MLflow's set up first (quiet, bounded, its process-wide URI on
    the store) when it is MLflow's, the local writer's connection closed after."""
    from llm_eval.tracking.sqlite_store import open_client

    lite = store.with_retry(lambda: open_client(ctx.tracking_uri, ctx.experiment))
    if lite is not None:
        try:
            with collector_paused():
                yield lite
        finally:
            lite.close()
        return
    os.environ.setdefault("MLFLOW_ENABLE_ASYNC_TRACE_LOGGING", "false")
    quiet_mlflow()
    with store.global_tracking_uri(ctx.tracking_uri):
        yield store.client_for(ctx)


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cycle collector off while the local store's record is written, then back
    as it was.

    Writing a record allocates a few objects per stored row, which starts a young
    collection every 700 allocations; every 10th and 100th of those also walks the older
    generations, where every object the stage still holds lives (a run's rows, clients and
    tasks). Inside `run` that was about a tenth of the record's CPU (0.68-0.75 s paused
    against 0.76-0.84 s for 2,000 rows). The local writer makes no reference cycles worth
    collecting (rows, dicts and tuples are freed by their counts); MLflow's API path, whose
    sessions do make cycles, keeps the collector on.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _log_model_runs(
    client: RecordClient,
    ctx: StageContext,
    exp_id: str,
    parent: str,
    rows_paths: Sequence[Path],
    artifacts: Sequence[Path],
    status: str,
    new_rows: Collection[RowKey] | None,
) -> list[str]:
    from llm_eval.runner.trace_io import read_rows
    from llm_eval.tracking.record import unique_rows

    run_ids = []
    for path in rows_paths:
        by_model: dict[str, list[TraceRow]] = {}
        for row in unique_rows(read_rows(path)):
            by_model.setdefault(row.model, []).append(row)
        for model, rows in by_model.items():
            paths = [path, *artifacts]
            run_id = _log_model_run(client, ctx, exp_id, parent, model, rows, paths, status)
            _reconcile(client, exp_id, run_id, ctx.stage, rows, f"{path} ({model})", new_rows)
            run_ids.append(run_id)
    return run_ids


def _log_model_run(
    client: RecordClient,
    ctx: StageContext,
    exp_id: str,
    parent: str,
    model: str,
    rows: list[TraceRow],
    artifacts: Sequence[Path],
    status: str,
) -> str:
    """One model's run: params, metrics, the task table and the files."""
    from llm_eval.reporting.metrics import benchmark_metrics, headline_metrics

    run_id = open_model_run(client, ctx, exp_id, parent, model, rows[0])
    with _finishing(client, run_id, status, ctx.ended_ms):
        # The headline as top-level metrics (the runs list's columns compare models), the
        # per-benchmark numbers as `<benchmark>/<metric>`.
        per_benchmark = benchmark_metrics(rows)
        headline = headline_metrics(rows, per_benchmark.get("overall"))
        store.log_batch(client, run_id, metrics=_metric_list({**headline, **per_benchmark}))
        if status == "FINISHED":
            # The runs list shows the parent runs, children folded under them: the parent
            # carries each model's headline as `<model>/<metric>` (as `report` logs it).
            store.log_batch(client, parent, metrics=_metric_list({model: headline}))
        store.with_retry(lambda: client.log_table(run_id, task_table(rows), f"tasks/{model}.json"))
        _log_artifacts(client, run_id, artifacts)
    return run_id


def _reconcile(
    client: RecordClient,
    exp_id: str,
    run_id: str,
    stage: str,
    rows: list[TraceRow],
    source: str,
    new_rows: Collection[RowKey] | None,
) -> None:
    """Bring the store in line with the rows: traces (both stages), verdicts (`score`)."""
    from llm_eval.tracking import record

    if stage not in TRACE_STAGES | VERDICT_STAGES:
        return
    scoring = stage in VERDICT_STAGES
    view = record.store_view(client, exp_id, rows, verdicts=scoring)
    traces = record.reconcile_traces(client, exp_id, run_id, rows, view, new_rows=new_rows)
    verdicts = record.reconcile_verdicts(client, rows, view) if scoring else None
    record.say_repairs(source, traces, verdicts)


def open_model_run(
    client: RecordClient, ctx: StageContext, exp_id: str, parent: str, model: str, row: TraceRow
) -> str:
    """Create a model's run `<stage>:<model> @ <label>` under the parent, with its tags and
    params (the label tells pipeline executions apart: `StageContext.label`)."""
    tags = {
        **ctx.base_tags(),
        "llm_eval.model": model,
        "llm_eval.provider": row.provider,
        "llm_eval.simulated": str(row.simulated).lower(),
        "mlflow.parentRunId": parent,
    }
    run_id = _create_run(client, exp_id, f"{ctx.stage}:{model} @ {ctx.label()}", tags, ctx)
    store.log_batch(client, run_id, params=stage_params(ctx.params, [model]))
    return run_id


def _log_plain_run(
    client: RecordClient,
    ctx: StageContext,
    exp_id: str,
    parent: str,
    artifacts: Sequence[Path],
    metrics: Mapping[str, Any] | None,
    models: Sequence[str],
    tables: Mapping[str, Mapping[str, list[Any]]] | None = None,
) -> str:
    tags = {**ctx.base_tags(), "mlflow.parentRunId": parent}
    if models:
        tags["llm_eval.model"] = ",".join(models)
    run_id = _create_run(client, exp_id, f"{ctx.stage} @ {ctx.label()}", tags, ctx)
    with _finishing(client, run_id, end_ms=ctx.ended_ms):
        run = ctx.params.get("run")
        run = run if isinstance(run, dict) else {}
        logged = safe_params(
            {"models": run.get("models") or [], "benchmarks": run.get("benchmarks") or []}, "run"
        )
        store.log_batch(client, run_id, params=logged)
        store.log_batch(client, run_id, metrics=_metric_list(metrics or {}))
        for name, table in (tables or {}).items():
            store.with_retry(partial(client.log_table, run_id, dict(table), name))
        _log_artifacts(client, run_id, artifacts)
    return run_id


def _create_run(
    client: RecordClient, exp_id: str, name: str, tags: dict[str, str], ctx: StageContext
) -> str:
    """A run that starts when the stage's process started (not when logging began)."""
    return store.create_run(client, exp_id, ctx.started_ms, tags, name)


class _finishing:
    """Context manager: the run ends with `status` (FINISHED), or FAILED if logging it raised,
    at `end_ms` (when the stage's work ended; None: now)."""

    def __init__(
        self,
        client: RecordClient,
        run_id: str,
        status: str = "FINISHED",
        end_ms: int | None = None,
    ) -> None:
        self.client, self.run_id, self.status, self.end_ms = client, run_id, status, end_ms

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type: type[BaseException] | None, *_: object) -> None:
        status = self.status if exc_type is None else "FAILED"
        store.with_retry(lambda: self.client.set_terminated(self.run_id, status, self.end_ms))


def _metric_list(data: Mapping[str, Any]) -> list[MetricValue]:
    """Nested numeric values as MLflow metrics `a/b/c`; booleans as 0/1; the rest skipped."""
    now = int(time.time() * 1000)
    metrics = []
    for key, value in flatten(dict(data)).items():
        if isinstance(value, bool):
            value = int(value)
        if isinstance(value, int | float):
            metrics.append(MetricValue(key.replace(".", "/"), float(value), now, 0))
    return metrics


def task_table(rows: Sequence[TraceRow]) -> dict[str, list[Any]]:
    """The per-task table: one row per trace row (model x task x epoch)."""
    columns = (
        "model",
        "benchmark",
        "task_id",
        "category",
        "epoch",
        "status",
        "extracted",
        "method",
        "latency_s",
        "tokens",
        "attempts",
        "error_kind",
    )
    table: dict[str, list[Any]] = {name: [] for name in columns}
    for row in rows:
        values = {
            "model": row.model,
            "benchmark": row.benchmark,
            "task_id": row.task_id,
            "category": row.category,
            "epoch": row.epoch,
            "status": row.status,
            "extracted": redact(row.score.extracted) if row.score and row.score.extracted else None,
            "method": row.score.method if row.score else None,
            "latency_s": row.latency_s,
            "tokens": row.usage.total_tokens,
            "attempts": row.attempts,
            "error_kind": row.error.kind if row.error else None,
        }
        for name in columns:
            table[name].append(values[name])
    return table


def _log_artifacts(client: RecordClient, run_id: str, paths: Sequence[Path]) -> None:
    """Copy files into the run's artifacts: traces/, results/, reports/, charts/ by kind."""
    for path in dict.fromkeys(paths):
        if path.is_file():
            folder = _artifact_folder(path)
            store.with_retry(partial(client.log_artifact, run_id, str(path), folder))


def _artifact_folder(path: Path) -> str:
    if path.suffix == ".svg":
        return "charts"
    if path.suffix == ".md":
        return "reports"
    if path.suffix == ".jsonl":
        return "traces"
    return "results"
