"""Write many rows as MLflow traces in a few store calls instead of a few per row.

`MlflowClient.start_trace` / `start_span` / `end_trace` cost about 30 ms of SQLite work per
row (a transaction for the trace, one per span export). Here every row's spans (planned by
`traces.plan_spans`, with the ids `identity` derives from the row's key) are built offline as
span records (`mlflow_rows.SpanRecord`) and written a batch at a time: on MLflow's SQL store as
bulk inserts (`sql_writes`, one transaction per batch, traces already stored skipped),
elsewhere with one `log_spans` call per batch and `link_traces_to_run`, 100 per call (the
store's limit). Trace tags also travel as `mlflow.traceTag.<key>` attributes of the root span,
which is how `log_spans` receives them.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from json.encoder import encode_basestring
from typing import TYPE_CHECKING, Any

from llm_eval.tracking.identity import otel_trace_id, span_id_of, trace_id_of, trace_key
from llm_eval.tracking.json_text import attribute_text
from llm_eval.tracking.sqlite_store import SqliteRecordClient
from llm_eval.tracking.traces import SpanPlan, plan_spans

if TYPE_CHECKING:
    from mlflow import MlflowClient
    from mlflow.entities import Span

    from llm_eval.schemas import TraceRow
    from llm_eval.tracking.mlflow_rows import SpanRecord, TraceSpans
    from llm_eval.tracking.store import RecordClient

BATCH_ROWS = 500
"""Rows per write: one transaction each, small enough to keep memory flat."""

SQLITE_BATCH_ROWS = 5000
"""Rows per transaction on the local store: each commit writes every index page it
touched, so fewer, larger transactions write MLflow's many trace indexes fewer times (a
few MiB of rows per batch)."""

LINKS_PER_CALL = 100
"""Traces per `link_traces_to_run` call (the store refuses more)."""

TAG_PREFIX = "mlflow.traceTag."


def log_rows_as_traces(
    client: RecordClient,
    experiment_id: str,
    run_id: str | None,
    rows: Sequence[TraceRow],
    *,
    shift_ns: Sequence[int] | None = None,
) -> list[str]:
    """Log one trace per row, linked to `run_id` if given; returns the trace ids in row order.

    The caller passes rows whose traces are not stored yet (`record` checks); on the SQL store
    a trace that is there anyway is skipped. `shift_ns[i]` moves row i's times (simulated rows
    carry simulated clocks, see the caller). On MLflow's SQL store the traces are bulk inserts
    (`sql_writes`); elsewhere, or if such a write fails, they go through MLflow's `log_spans`.
    """
    if isinstance(client, SqliteRecordClient):
        return _write_with_sqlite(client, experiment_id, run_id, rows, shift_ns)
    from llm_eval.tracking.sql_writes import bulk_write, sql_store, write_traces

    store = sql_store(client)
    artifact_root = client.get_experiment(experiment_id).artifact_location if store else ""
    trace_ids: list[str] = []
    api_ids: list[str] = []  # traces still to link to the run through the API
    for start in range(0, len(rows), BATCH_ROWS):
        traces = [
            row_trace(rows[index], experiment_id, shift_ns[index] if shift_ns else 0)
            for index in range(start, min(start + BATCH_ROWS, len(rows)))
        ]
        trace_ids += [trace.trace_id for trace in traces]
        if store is not None:
            write = partial(write_traces, store, experiment_id, artifact_root, run_id, traces)
            if bulk_write(write, "trace"):
                continue
            store = None  # MLflow's API writes this batch and the rest
        _log_spans(client, experiment_id, [span for trace in traces for span in trace.spans])
        api_ids += [trace.trace_id for trace in traces]
    if run_id is not None:
        for start in range(0, len(api_ids), LINKS_PER_CALL):
            client.link_traces_to_run(api_ids[start : start + LINKS_PER_CALL], run_id)
    return trace_ids


def _write_with_sqlite(
    client: SqliteRecordClient,
    experiment_id: str,
    run_id: str | None,
    rows: Sequence[TraceRow],
    shift_ns: Sequence[int] | None,
) -> list[str]:
    """The same traces written with `sqlite3` into the local store (`sqlite_traces`), a
    batch per transaction; a write that still fails after the lock retries raises (the
    stage then says `llm-eval track` records them later)."""
    from llm_eval.tracking import sqlite_traces
    from llm_eval.tracking.store import with_retry

    artifact_root = client.get_experiment(experiment_id).artifact_location
    trace_ids: list[str] = []
    for start in range(0, len(rows), SQLITE_BATCH_ROWS):
        traces = [
            row_trace(rows[index], experiment_id, shift_ns[index] if shift_ns else 0)
            for index in range(start, min(start + SQLITE_BATCH_ROWS, len(rows)))
        ]
        trace_ids += [trace.trace_id for trace in traces]
        with_retry(
            partial(
                sqlite_traces.write_traces,
                client.connection,
                experiment_id,
                artifact_root,
                run_id,
                traces,
            )
        )
    return trace_ids


def _log_spans(client: MlflowClient, experiment_id: str, spans: list[SpanRecord]) -> None:
    from mlflow.tracing.client import TracingClient

    TracingClient(client.tracking_uri).log_spans(experiment_id, [_mlflow_span(s) for s in spans])


def row_trace(row: TraceRow, experiment_id: str, shift_ns: int = 0) -> TraceSpans:
    """The row's trace as span records, with the ids its key determines."""
    from llm_eval.tracking.mlflow_rows import TraceSpans

    plan = plan_spans(row)
    key = trace_key(row)
    otel_id = otel_trace_id(key)
    trace_id = trace_id_of(key)
    root_span_id = span_id_of(key, 0)
    tags = {**plan.tags, "mlflow.traceName": plan.root.name}
    root_attributes = {
        "mlflow.experimentId": experiment_id,
        **{TAG_PREFIX + name: value for name, value in tags.items()},
    }
    spans = [_span(plan.root, trace_id, otel_id, root_span_id, None, shift_ns, root_attributes)]
    for index, child in enumerate(plan.children, start=1):
        span_id = span_id_of(key, index)
        spans.append(_span(child, trace_id, otel_id, span_id, root_span_id, shift_ns, {}))
    return TraceSpans(trace_id, spans, tags)


def _span(
    plan: SpanPlan,
    trace_id: str,
    otel_trace_id: int,
    span_id: int,
    parent_id: int | None,
    shift_ns: int,
    extra: dict[str, Any],
) -> SpanRecord:
    """One span; attribute values are JSON text, as MLflow stores them."""
    from llm_eval.tracking.mlflow_rows import SpanRecord

    attributes = {
        "mlflow.traceRequestId": trace_id,
        "mlflow.spanType": plan.span_type,
        "mlflow.spanInputs": plan.inputs,
        "mlflow.spanOutputs": plan.outputs,
        **plan.attributes,
        **extra,
    }
    values = {key: value for key, value in attributes.items() if value is not None}
    # Strings are most attributes: `encode_basestring` for them, without a call through
    # `attribute_text`.
    encoded = {
        key: encode_basestring(value) if type(value) is str else attribute_text(value)
        for key, value in values.items()
    }
    return SpanRecord(
        trace_id=trace_id,
        otel_trace_id=otel_trace_id,
        span_id=span_id,
        parent_id=parent_id,
        name=plan.name,
        span_type=plan.span_type,
        start_ns=plan.start_ns + shift_ns,
        end_ns=plan.end_ns + shift_ns,
        error=plan.error,
        attributes=encoded,
        values=values,
    )


def _mlflow_span(span: SpanRecord) -> Span:
    """The span as an MLflow `Span` entity, for MLflow's `log_spans`."""
    from mlflow.entities import Span
    from mlflow.tracing.utils import build_otel_context
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.trace import Status, StatusCode

    context = build_otel_context(span.otel_trace_id, span.span_id)
    parent = (
        None if span.parent_id is None else build_otel_context(span.otel_trace_id, span.parent_id)
    )
    otel = ReadableSpan(
        name=span.name,
        context=context,
        parent=parent,
        start_time=span.start_ns,
        end_time=span.end_ns,
        attributes=span.attributes,
        status=Status(StatusCode.ERROR if span.error else StatusCode.OK),
        resource=Resource.get_empty(),
    )
    return Span(otel)
