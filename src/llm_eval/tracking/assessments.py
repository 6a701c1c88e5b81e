"""Each verdict of the `score` stage as an MLflow assessment on the trace the `run` logged.

The traces come from the model's latest tracked `run` stage (`llm_eval.stage = run`, same
model); a row finds its trace by benchmark, task id and epoch (the trace's tags). A scored
row becomes feedback `correct` (True / False) with the scoring method and the extracted
answer as rationale; an error row becomes feedback with an error instead of a value, so
MLflow's trace views can filter right, wrong and failed answers. Rows without a tracked
trace (tracking was off for the run) are skipped and counted.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING

from llm_eval.redaction import redact
from llm_eval.tracking import store
from llm_eval.tracking.traces import TRACE_KEY_TAGS, trace_key

if TYPE_CHECKING:
    from mlflow import MlflowClient
    from mlflow.entities import Feedback

    from llm_eval.schemas import TraceRow

FEEDBACK_NAME = "correct"
SOURCE_ID = "llm-eval score"

TraceKey = tuple[str, ...]
"""The values of a trace's `TRACE_KEY_TAGS`."""


def log_verdicts(
    client: MlflowClient,
    experiment_id: str,
    model: str,
    rows: Sequence[TraceRow],
    *,
    use_sql_writes: bool = True,
) -> int:
    """Log one assessment per row whose trace exists; returns how many were logged.

    On MLflow's SQL store they are one bulk insert (`sql_writes`); elsewhere, or if that
    fails, one `log_assessment` call each.
    """
    traces = latest_run_traces(client, experiment_id, model)
    feedback = [
        verdict_feedback(traces[key], row) for row in rows if (key := trace_key(row)) in traces
    ]
    if feedback:
        _write_feedback(client, feedback, use_sql_writes)
    if rows and len(feedback) < len(rows):
        print(
            f"note: {len(rows) - len(feedback)} of {len(rows)} verdicts of {model!r} have no "
            "tracked trace to attach to (was tracking off for its run?)",
            file=sys.stderr,
        )
    return len(feedback)


def _write_feedback(client: MlflowClient, feedback: list[Feedback], use_sql_writes: bool) -> None:
    from llm_eval.tracking.sql_writes import bulk_write, sql_store, write_assessments

    sql = sql_store(client) if use_sql_writes else None
    if sql is not None and bulk_write(partial(write_assessments, sql, feedback), "assessment"):
        return
    from mlflow.tracing.client import TracingClient

    tracing = TracingClient(client.tracking_uri)
    for assessment in feedback:
        trace_id = assessment.trace_id
        assert trace_id is not None  # set by verdict_feedback
        store.with_retry(partial(tracing.log_assessment, trace_id, assessment))


def latest_run_traces(client: MlflowClient, experiment_id: str, model: str) -> dict[TraceKey, str]:
    """Trace ids of the model's most recent tracked `run` stage, by (benchmark, task, epoch)."""
    runs = client.search_runs(
        [experiment_id],
        filter_string=f"tags.`llm_eval.stage` = 'run' AND tags.`llm_eval.model` = '{model}'",
        order_by=["attributes.start_time DESC"],
        max_results=1,
    )
    if not runs:
        return {}
    found: dict[TraceKey, str] = {}
    page_token = None
    while True:
        page = client.search_traces(
            locations=[experiment_id],
            run_id=runs[0].info.run_id,
            max_results=500,
            page_token=page_token,
            include_spans=False,
        )
        for trace in page:
            key = tuple(trace.info.tags.get(tag, "") for tag in TRACE_KEY_TAGS)
            found.setdefault(key, trace.info.trace_id)
        page_token = page.token
        if not page_token:
            return found


def verdict_feedback(trace_id: str, row: TraceRow) -> Feedback:
    """One feedback: the verdict with its reason, or the error that left no verdict."""
    from mlflow.entities import AssessmentError, AssessmentSource, AssessmentSourceType, Feedback

    source = AssessmentSource(source_type=AssessmentSourceType.CODE, source_id=SOURCE_ID)
    if row.status == "error" or row.score is None:
        kind = row.error.kind if row.error else "unscored"
        message = redact(row.error.message)[:500] if row.error else "no verdict"
        feedback = Feedback(
            name=FEEDBACK_NAME,
            source=source,
            error=AssessmentError(error_code=kind, error_message=message),
        )
    else:
        extracted = redact(row.score.extracted) if row.score.extracted else None
        feedback = Feedback(
            name=FEEDBACK_NAME,
            value=row.status == "correct",
            source=source,
            rationale=(
                f"{row.score.method}: extracted {extracted!r}, expected {redact(row.answer)!r}"
            ),
            metadata={"method": row.score.method, "scorer": row.scorer or ""},
        )
    feedback.trace_id = trace_id
    return feedback
