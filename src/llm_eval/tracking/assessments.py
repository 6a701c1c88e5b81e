"""Each verdict of the `score` stage as an MLflow assessment on its row's own trace.

A row's trace is the one its key names (`identity`), whichever MLflow run logged it. A scored
row becomes feedback `correct` (True / False) with the scoring method and the extracted answer
as rationale; an error row becomes feedback with an error instead of a value, so MLflow's
trace views can filter right, wrong and failed answers. A trace holds one current verdict:
scoring again leaves an unchanged verdict alone and replaces a changed one (the new
assessment `overrides` the old, which stays, marked not valid, as its history).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from llm_eval.redaction import redact
from llm_eval.tracking import store
from llm_eval.tracking.feedback import FeedbackError, FeedbackRecord, FeedbackSource
from llm_eval.tracking.identity import trace_id_of, trace_key
from llm_eval.tracking.sqlite_store import SqliteRecordClient

if TYPE_CHECKING:
    from llm_eval.schemas import TraceRow
    from llm_eval.tracking.feedback import StoredFeedback
    from llm_eval.tracking.store import RecordClient

FEEDBACK_NAME = "correct"
SOURCE_ID = "llm-eval score"


@dataclass(frozen=True)
class VerdictCounts:
    """What logging the verdicts of some rows did."""

    written: int
    replaced: int
    unchanged: int


def log_verdicts(
    client: RecordClient,
    rows: Sequence[TraceRow],
    current: Mapping[str, Sequence[StoredFeedback]],
) -> VerdictCounts:
    """Give each row's trace (which must exist) its verdict, replacing a different one.

    `current`: the valid `correct` assessments already on the traces, by trace id. On MLflow's
    SQL store the writes are one bulk transaction (`sql_writes`); elsewhere, or if that fails,
    one `log_assessment` call each.
    """
    feedback: list[FeedbackRecord] = []
    invalidate: list[tuple[str, str]] = []
    replaced = unchanged = 0
    for row in rows:
        new = verdict_feedback(trace_id_of(trace_key(row)), row)
        ours = [a for a in current.get(new.trace_id, ()) if _is_ours(a)]
        same = [a for a in ours if verdict_of(a) == verdict_of(new)]
        if same:
            # Two clones scoring the same rows at once can both write this verdict: every
            # process keeps the same one (the smallest id) and drops the rest, so concurrent
            # repairs agree instead of writing more.
            keep = min(same, key=lambda a: str(a.assessment_id))
            extra = [(new.trace_id, str(a.assessment_id)) for a in ours if a is not keep]
            unchanged += not extra
            replaced += bool(extra)
            invalidate += extra
            continue
        if ours:
            replaced += 1
            new.overrides = ours[-1].assessment_id
            invalidate += [(new.trace_id, str(a.assessment_id)) for a in ours]
        feedback.append(new)
    if feedback or invalidate:
        write_feedback(client, feedback, invalidate)
    return VerdictCounts(len(feedback), replaced, unchanged)


def _is_ours(assessment: StoredFeedback) -> bool:
    """Written by `score` (a reviewer's own `correct` feedback is never replaced)."""
    source = assessment.source
    return source is not None and source.source_id == SOURCE_ID


def verdict_of(assessment: StoredFeedback) -> tuple[Any, str | None, str | None]:
    """What makes two verdicts the same: value, error code and rationale."""
    error = getattr(assessment, "error", None)
    return (
        getattr(assessment, "value", None),
        error.error_code if error is not None else None,
        getattr(assessment, "rationale", None),
    )


def write_feedback(
    client: RecordClient, feedback: list[FeedbackRecord], invalidate: list[tuple[str, str]]
) -> None:
    """Write the new verdicts; mark `invalidate` ((trace id, assessment id)) not valid."""
    ids = [assessment_id for _, assessment_id in invalidate]
    if isinstance(client, SqliteRecordClient):
        from llm_eval.tracking import sqlite_traces

        write = partial(sqlite_traces.write_assessments, client.connection, feedback, ids)
        store.with_retry(write)
        return
    from llm_eval.tracking.sql_writes import bulk_write, sql_store, write_assessments

    sql = sql_store(client)
    if sql is not None and bulk_write(partial(write_assessments, sql, feedback, ids), "assessment"):
        return
    from mlflow.tracing.client import TracingClient

    tracing = TracingClient(client.tracking_uri)
    for record in feedback:
        # The store marks the one `overrides` names as not valid.
        store.with_retry(partial(tracing.log_assessment, record.trace_id, record.to_mlflow()))
    overridden = {str(a.overrides) for a in feedback}
    for trace_id, assessment_id in invalidate:
        if assessment_id not in overridden:
            # A second current verdict of ours, which only older versions wrote: the API has
            # no way to mark it not valid, so it goes (the verdict it duplicated stays).
            _delete_if_there(tracing, trace_id, assessment_id)


def _delete_if_there(tracing: Any, trace_id: str, assessment_id: str) -> None:
    """Delete an assessment; one another process deleted first is already gone."""
    from mlflow.exceptions import MlflowException

    try:
        store.with_retry(partial(tracing.delete_assessment, trace_id, assessment_id))
    except MlflowException as exc:
        if "RESOURCE_DOES_NOT_EXIST" not in str(exc.error_code) and "not found" not in str(exc):
            raise


def verdict_feedback(trace_id: str, row: TraceRow) -> FeedbackRecord:
    """One feedback: the verdict with its reason, or the error that left no verdict."""
    source = FeedbackSource(source_type="CODE", source_id=SOURCE_ID)
    if row.status == "error" or row.score is None:
        kind = row.error.kind if row.error else "unscored"
        message = redact(row.error.message)[:500] if row.error else "no verdict"
        return FeedbackRecord(
            trace_id=trace_id,
            name=FEEDBACK_NAME,
            source=source,
            error=FeedbackError(error_code=kind, error_message=message),
        )
    extracted = redact(row.score.extracted) if row.score.extracted else None
    return FeedbackRecord(
        trace_id=trace_id,
        name=FEEDBACK_NAME,
        value=row.status == "correct",
        source=source,
        rationale=f"{row.score.method}: extracted {extracted!r}, expected {redact(row.answer)!r}",
        metadata={"method": row.score.method, "scorer": row.scorer or ""},
    )
