"""Write many rows as MLflow traces in a few store calls instead of a few per row.

`MlflowClient.start_trace` / `start_span` / `end_trace` cost about 30 ms of SQLite work per
row (a transaction for the trace, one per span export), which made tracking a 2,000-row run
take a minute. Here every row's spans (planned by `traces.plan_spans`) are built as MLflow
`Span` entities offline and written with one `log_spans` call per batch, which creates the
traces in the same transaction; the traces are then linked to the stage's run, 100 per call
(the store's limit). Trace tags travel as `mlflow.traceTag.<key>` attributes of the root span,
which the store turns into tags when it creates the trace.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from llm_eval.tracking.traces import SpanPlan, plan_spans

if TYPE_CHECKING:
    from mlflow import MlflowClient
    from mlflow.entities import Span

    from llm_eval.schemas import TraceRow

BATCH_ROWS = 500
"""Rows per `log_spans` call: one transaction each, small enough to keep memory flat."""

LINKS_PER_CALL = 100
"""Traces per `link_traces_to_run` call (the store refuses more)."""

TAG_PREFIX = "mlflow.traceTag."


def log_rows_as_traces(
    client: MlflowClient,
    experiment_id: str,
    run_id: str,
    rows: Sequence[TraceRow],
    *,
    shift_ns: Sequence[int] | None = None,
) -> list[str]:
    """Log one trace per row, linked to `run_id`; returns the trace ids in row order.

    `shift_ns[i]` moves row i's times (simulated rows carry simulated clocks, see the caller).
    """
    from mlflow.tracing.client import TracingClient

    tracing = TracingClient(client.tracking_uri)
    rng = random.SystemRandom()
    trace_ids: list[str] = []
    for start in range(0, len(rows), BATCH_ROWS):
        spans: list[Span] = []
        for index in range(start, min(start + BATCH_ROWS, len(rows))):
            shift = shift_ns[index] if shift_ns is not None else 0
            trace_id, row_spans = _row_spans(rows[index], experiment_id, rng, shift)
            trace_ids.append(trace_id)
            spans += row_spans
        tracing.log_spans(experiment_id, spans)
    for start in range(0, len(trace_ids), LINKS_PER_CALL):
        client.link_traces_to_run(trace_ids[start : start + LINKS_PER_CALL], run_id)
    return trace_ids


def _row_spans(
    row: TraceRow, experiment_id: str, rng: random.SystemRandom, shift_ns: int
) -> tuple[str, list[Span]]:
    from mlflow.tracing.constant import TRACE_REQUEST_ID_PREFIX
    from mlflow.tracing.utils import encode_trace_id

    plan = plan_spans(row)
    otel_trace_id = rng.getrandbits(128)
    trace_id = TRACE_REQUEST_ID_PREFIX + encode_trace_id(otel_trace_id)
    root_span_id = rng.getrandbits(64)
    root_attributes = {
        "mlflow.experimentId": experiment_id,
        **{TAG_PREFIX + key: value for key, value in plan.tags.items()},
        TAG_PREFIX + "mlflow.traceName": plan.root.name,
    }
    spans = [_span(plan.root, trace_id, otel_trace_id, root_span_id, None, shift_ns,
                   root_attributes)]  # fmt: skip
    for child in plan.children:
        span_id = rng.getrandbits(64)
        spans.append(_span(child, trace_id, otel_trace_id, span_id, root_span_id, shift_ns, {}))
    return trace_id, spans


def _span(
    plan: SpanPlan,
    trace_id: str,
    otel_trace_id: int,
    span_id: int,
    parent_id: int | None,
    shift_ns: int,
    extra: dict[str, Any],
) -> Span:
    """One MLflow span entity; attribute values are JSON, as MLflow stores them."""
    from mlflow.entities import Span
    from mlflow.tracing.utils import build_otel_context
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.trace import Status, StatusCode

    attributes = {
        "mlflow.traceRequestId": trace_id,
        "mlflow.spanType": plan.span_type,
        "mlflow.spanInputs": plan.inputs,
        "mlflow.spanOutputs": plan.outputs,
        **plan.attributes,
        **extra,
    }
    encoded = {
        key: json.dumps(value, ensure_ascii=False, default=str)
        for key, value in attributes.items()
        if value is not None
    }
    otel = ReadableSpan(
        name=plan.name,
        context=build_otel_context(otel_trace_id, span_id),
        parent=build_otel_context(otel_trace_id, parent_id) if parent_id is not None else None,
        start_time=plan.start_ns + shift_ns,
        end_time=plan.end_ns + shift_ns,
        attributes=encoded,
        status=Status(StatusCode.ERROR if plan.error else StatusCode.OK),
        resource=Resource.get_empty(),
    )
    return Span(otel)
