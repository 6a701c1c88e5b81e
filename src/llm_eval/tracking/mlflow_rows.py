"""The rows MLflow's SQL store holds for our traces and verdicts, built without MLflow.

Each builder returns one table row as a dict (column -> value), the row MLflow 3.17's own
`log_spans`, `link_traces_to_run` and `create_assessment` would leave for the same span
records and verdicts; `mlflow_rules` holds the MLflow rules they follow. `sqlite_traces`
inserts the rows with `sqlite3`, `sql_writes` through SQLAlchemy for other databases.
Nothing here imports MLflow, SQLAlchemy or OpenTelemetry.

What `log_spans` does that these rows never need: OpenTelemetry attribute translation for
other tracers' attribute names (our spans carry MLflow's names already; the one step that
can touch them, `sanitize_attributes`, is kept), cost priced from a model name (our spans
carry their cost), OTel resource attributes (ours have none) and the user id in
`trace_request_metadata` (ours have none; a span that carries one is refused here).
"""

from __future__ import annotations

import base64
import functools
import json
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from llm_eval.tracking.feedback import FeedbackError, FeedbackRecord, FeedbackSource
from llm_eval.tracking.json_text import ascii_json, unicode_json
from llm_eval.tracking.mlflow_rules import (
    ARTIFACT_LOCATION_TAG,
    ARTIFACTS_FOLDER_NAME,
    ASSESSMENT_ID_PREFIX,
    CONVERSATION_ID,
    COST_COLUMN_BY_KEY,
    SOURCE_RUN_ID,
    SPANS_IN_TRACKING_STORE,
    TOKEN_COLUMN_BY_KEY,
    TRACE_FOLDER_NAME,
    UNPARSED,
    EntityAssociationType,
    MlflowRuleError,
    SpanAttributeKey,
    TraceState,
    TraceTagKey,
    aggregate_cost_from_span_nodes,
    aggregate_usage_from_span_nodes,
    append_to_uri_path,
    assessment_aggregate,
    bounded_model_dimension,
    finite_float_or_none,
    sanitize_attributes,
    source_type,
    span_aggregation_node,
    token_count_or_none,
    truncated_preview,
    try_parse_json_string,
    validate_session_id,
    validate_trace_name,
    validate_trace_tag,
)

__all__ = [
    "SpanRecord",
    "TraceRows",
    "TraceSpans",
    "assessment_row",
    "feedback_from_row",
    "link_row",
    "trace_rows",
]


@dataclass(frozen=True)
class SpanRecord:
    """One span as the store keeps it: OpenTelemetry ids, and attribute values as JSON text."""

    trace_id: str
    otel_trace_id: int
    span_id: int
    parent_id: int | None
    name: str
    span_type: str
    start_ns: int
    end_ns: int
    error: bool
    attributes: dict[str, str]
    values: Mapping[str, Any] | None = None
    """The attributes before JSON encoding, where the builder kept them (`bulk_traces`):
    the rules below read a value from here instead of decoding its text again, wherever
    `sanitize_attributes` left that text as it was built."""


@dataclass(frozen=True)
class TraceSpans:
    """One trace to write: its id, its spans (root first) and its tags."""

    trace_id: str
    spans: Sequence[SpanRecord]
    tags: dict[str, str]


# --------------------------------------------------------------------------- traces


def _stored_attributes(span: SpanRecord) -> dict[str, Any]:
    """The span's attributes as `log_spans` stores and reads them (`sanitize_attributes`)."""
    return sanitize_attributes(span.attributes)


def _kept_value(span: SpanRecord, stored: Mapping[str, Any], key: str) -> Any:
    """The value the stored text of attribute `key` encodes, as the builder kept it, or
    `UNPARSED` where it kept none or `sanitize_attributes` changed the text (the caller
    then decodes the stored text as MLflow does). An absent attribute is None."""
    text = stored.get(key)
    if text is None:
        return None
    values = span.values
    if values is None or text is not span.attributes.get(key):
        return UNPARSED
    return values[key]


@dataclass(frozen=True)
class TraceRows:
    """One trace's rows in `trace_info`, `trace_tags` and `spans`."""

    info: dict[str, Any]
    tags: list[dict[str, Any]]
    spans: list[dict[str, Any]]


def trace_rows(
    trace: TraceSpans, experiment_id: int, artifact_root: str, ascii_only: bool
) -> TraceRows:
    """Every row `log_spans` writes for the trace. Each span's stored attributes and the
    root's tags are worked out once here and shared by the three tables' rows (working
    them out per table was most of the CPU of writing a trace).

    `ascii_only`: escape non-ASCII text in `content`, as MLflow does on MSSQL only (its
    column is not Unicode there); elsewhere the text stays searchable as typed.
    """
    spans = _stored_spans(trace)
    root = _root(trace.spans)
    root_attributes = next(attributes for span, attributes in spans if span is root)
    root_tags = _root_tags(root, root_attributes)
    return TraceRows(
        info=_trace_info_row(trace, experiment_id, spans, root, root_attributes, root_tags),
        tags=_trace_tag_rows(trace, artifact_root, root_tags),
        spans=[_span_row(span, attrs, experiment_id, ascii_only) for span, attrs in spans],
    )


def _span_row(
    span: SpanRecord, attributes: dict[str, Any], experiment_id: int, ascii_only: bool
) -> dict[str, Any]:
    """The `spans` row: the columns `log_spans` fills, and `Span.to_dict()` as `content`
    (`attributes`: the span's as stored, `_stored_attributes`)."""
    content: dict[str, Any] = {
        "trace_id": _base64(span.otel_trace_id, 16),
        "span_id": _base64(span.span_id, 8),
        "parent_span_id": None if span.parent_id is None else _base64(span.parent_id, 8),
        "name": span.name,
        "start_time_unix_nano": span.start_ns,
        "end_time_unix_nano": span.end_ns,
        "events": [],
        "status": {"code": "STATUS_CODE_ERROR" if span.error else "STATUS_CODE_OK", "message": ""},
        "attributes": attributes,
        "links": [],
    }
    cost: dict[str, Any] = {}
    if raw_cost := attributes.get(SpanAttributeKey.LLM_COST):
        try:
            cost = json.loads(raw_cost)
        except (TypeError, ValueError):
            cost = {}  # as MLflow: a malformed cost is skipped
    return {
        "trace_id": span.trace_id,
        "experiment_id": experiment_id,
        "span_id": _hex_id(span.span_id),
        "parent_span_id": _hex_id(span.parent_id),
        "name": span.name,
        "type": span.span_type,
        "status": "ERROR" if span.error else "OK",
        "start_time_unix_nano": span.start_ns,
        "end_time_unix_nano": span.end_ns,
        # MLflow's TraceJSONEncoder only differs from json's for objects JSON cannot hold;
        # a span dictionary holds strings, numbers and lists.
        "content": (ascii_json if ascii_only else unicode_json)(content),
        "input_cost": finite_float_or_none(cost.get("input_cost")),
        "output_cost": finite_float_or_none(cost.get("output_cost")),
        "total_cost": finite_float_or_none(cost.get("total_cost")),
        "model_name": _model_dimension(attributes.get(SpanAttributeKey.MODEL)),
        "model_provider": _model_dimension(attributes.get(SpanAttributeKey.MODEL_PROVIDER)),
    }


def _hex_id(span_id: int | None) -> str | None:
    """A span id as MLflow's columns hold it: 16 hex digits (`encode_span_id`)."""
    return f"{span_id:016x}" if span_id is not None else None


def _base64(value: int, size: int) -> str:
    """An OpenTelemetry id as `Span.to_dict` writes it: big-endian bytes in base64."""
    return base64.b64encode(value.to_bytes(size, "big")).decode("ascii")


def _model_dimension(raw: str | None) -> str | None:
    """A model name or provider column, from the span's JSON attribute text."""
    return bounded_model_dimension(_parsed_text(raw) if isinstance(raw, str) else raw)


def _stored_spans(trace: TraceSpans) -> list[tuple[SpanRecord, dict[str, Any]]]:
    """Each span with its stored attributes, computed once for the whole trace's row."""
    return [(span, _stored_attributes(span)) for span in trace.spans]


def _root(spans: Sequence[SpanRecord]) -> SpanRecord:
    """The root span (no parent). MLflow writes a trace without one as IN_PROGRESS, with no
    previews or tags; our traces always have one, so its absence is an error here."""
    root = next((span for span in spans if span.parent_id is None), None)
    if root is None:
        raise MlflowRuleError(f"trace {spans[0].trace_id} has no root span")
    return root


def _trace_info_row(
    trace: TraceSpans,
    experiment_id: int,
    spans: list[tuple[SpanRecord, dict[str, Any]]],
    root: SpanRecord,
    root_attributes: dict[str, Any],
    root_tags: dict[str, str],
) -> dict[str, Any]:
    """The `trace_info` row `log_spans` leaves for a trace it creates from these spans:
    times from the spans, state from the root span, previews of the root's inputs and
    outputs, token usage and cost summed over the span tree, trace name from the root's
    `mlflow.traceTag.mlflow.traceName` attribute."""
    start_ms = min(span.start_ns for span in trace.spans) // 1_000_000
    end_ms = max(span.end_ns for span in trace.spans) // 1_000_000
    row: dict[str, Any] = {
        "request_id": trace.trace_id,
        "experiment_id": experiment_id,
        "timestamp_ms": start_ms,
        "execution_time_ms": (end_ms - start_ms) if end_ms else None,
        "status": (TraceState.ERROR if root.error else TraceState.OK).value,
        "client_request_id": None,
        "request_preview": None,
        "response_preview": None,
        # `log_spans` inserts 0 and bumps it once for the span write.
        "db_payload_generation": 1,
        "trace_name": root_tags.get(TraceTagKey.TRACE_NAME),
        "session_id": _session_id(spans),
    }
    row.update(_previews(root, root_attributes))
    usage = _aggregate(spans, SpanAttributeKey.CHAT_USAGE, aggregate_usage_from_span_nodes)
    for key, column in TOKEN_COLUMN_BY_KEY.items():
        row[column] = token_count_or_none(usage.get(key))
    cost = _aggregate(spans, SpanAttributeKey.LLM_COST, aggregate_cost_from_span_nodes)
    for key, column in COST_COLUMN_BY_KEY.items():
        row[column] = finite_float_or_none(cost.get(key))
    return row


def _previews(root: SpanRecord, attributes: Mapping[str, Any]) -> dict[str, str]:
    """`_update_trace_info_attributes`: request and response previews of the root span;
    one that fails to build ends the attempt, keeping what was built (as MLflow)."""
    previews: dict[str, str] = {}
    try:
        if inputs := attributes.get(SpanAttributeKey.INPUTS):
            parsed = _kept_value(root, attributes, SpanAttributeKey.INPUTS)
            previews["request_preview"] = truncated_preview(inputs, "user", parsed)
        if outputs := attributes.get(SpanAttributeKey.OUTPUTS):
            parsed = _kept_value(root, attributes, SpanAttributeKey.OUTPUTS)
            previews["response_preview"] = truncated_preview(outputs, "assistant", parsed)
    except Exception:
        pass
    return previews


def _aggregate(
    spans: list[tuple[SpanRecord, dict[str, Any]]],
    key: str,
    aggregate: Callable[[list[Any]], dict[str, Any] | None],
) -> dict[str, Any]:
    """The usage or cost summed over the span tree; none (as MLflow finds) when no span
    carries the attribute, without building the tree."""
    if not any(key in attributes for _, attributes in spans):
        return {}
    return aggregate(_nodes(spans, key)) or {}


def _nodes(spans: list[tuple[SpanRecord, dict[str, Any]]], key: str) -> list[Any]:
    return [
        span_aggregation_node(
            str(_hex_id(span.span_id)),
            _hex_id(span.parent_id),
            attrs,
            key,
            _kept_value(span, attrs, key),
        )
        for span, attrs in spans
    ]


def _session_id(spans: list[tuple[SpanRecord, dict[str, Any]]]) -> str | None:
    """The first span's session id (OTel `session.id` or `gen_ai.conversation.id`); a user
    id would go to `trace_request_metadata`, which these rows do not write."""
    session: str | None = None
    for span, attributes in spans:
        if attributes.get(SpanAttributeKey.USER_ID):
            raise MlflowRuleError(f"span {span.name!r}: user.id is not written without MLflow")
        found = attributes.get(SpanAttributeKey.SESSION_ID) or attributes.get(CONVERSATION_ID)
        if session is None and found:
            session = validate_session_id(try_parse_json_string(found))
    return session


@functools.lru_cache(maxsize=4096)
def _parsed_text(raw: str) -> Any:
    """`try_parse_json_string`, remembered: the same tag values (model, benchmark, run id,
    epoch) come back in every trace of a run."""
    return try_parse_json_string(raw)


def _root_tags(root: SpanRecord, root_attributes: Mapping[str, Any]) -> dict[str, str]:
    """The trace tags carried as `mlflow.traceTag.<key>` root attributes, as `log_spans`
    restores them: a tag MLflow would refuse is skipped, a too long trace name refused."""
    prefix = SpanAttributeKey.TRACE_TAG_PREFIX
    tags: dict[str, str] = {}
    for name, raw in root_attributes.items():
        if not name.startswith(prefix):
            continue
        kept = _kept_value(root, root_attributes, name)
        text = kept if type(kept) is str else _parsed_text(raw)
        try:
            key, value = validate_trace_tag(name[len(prefix) :], str(text))
        except MlflowRuleError:
            continue
        if key == TraceTagKey.TRACE_NAME:
            value = str(validate_trace_name(value))
        tags[key] = value
    return tags


def _trace_tag_rows(
    trace: TraceSpans, artifact_root: str, root_tags: dict[str, str]
) -> list[dict[str, Any]]:
    """The `trace_tags` rows: artifact location, spans location, then the root span's tags
    (the trace name is a `trace_info` column, not a tag)."""
    values = {
        ARTIFACT_LOCATION_TAG: _artifact_location(artifact_root, trace.trace_id),
        TraceTagKey.SPANS_LOCATION: SPANS_IN_TRACKING_STORE,
    }
    values.update((k, v) for k, v in root_tags.items() if k != TraceTagKey.TRACE_NAME)
    return [{"request_id": trace.trace_id, "key": k, "value": v} for k, v in values.items()]


_PLACEHOLDER_ID = "tr-" + "0" * 32
"""A trace id of the shape every trace id has (`identity`), to build a location once."""


def _artifact_location(artifact_root: str, trace_id: str) -> str:
    """`<artifact root>/traces/<trace id>/artifacts`, as `_get_trace_artifact_location_tag`."""
    if len(trace_id) != len(_PLACEHOLDER_ID):
        return append_to_uri_path(artifact_root, TRACE_FOLDER_NAME, trace_id, ARTIFACTS_FOLDER_NAME)
    return _location_template(artifact_root).replace(_PLACEHOLDER_ID, trace_id)


@functools.lru_cache(maxsize=8)
def _location_template(artifact_root: str) -> str:
    """The location for `_PLACEHOLDER_ID`: parsing the root's URI once per root, not per
    trace."""
    return append_to_uri_path(
        artifact_root, TRACE_FOLDER_NAME, _PLACEHOLDER_ID, ARTIFACTS_FOLDER_NAME
    )


def link_row(trace_id: str, run_id: str) -> dict[str, Any]:
    """The `entity_associations` row `link_traces_to_run` adds for one trace."""
    return {
        "association_id": uuid.uuid4().hex,
        "source_type": EntityAssociationType.TRACE,
        "source_id": trace_id,
        "destination_type": EntityAssociationType.RUN,
        "destination_id": run_id,
        "created_time": int(time.time() * 1000),  # get_current_time_millis
    }


# --------------------------------------------------------------------------- assessments


def new_assessment_id() -> str:
    """`generate_assessment_id`: `a-` and a random UUID in hex."""
    return ASSESSMENT_ID_PREFIX + uuid.uuid4().hex


def assessment_row(
    record: FeedbackRecord, experiment_id: int, trace_timestamp_ms: int
) -> dict[str, Any]:
    """The `assessments` row `create_assessment` writes for this feedback on a trace of
    `experiment_id` that starts at `trace_timestamp_ms` (`SqlAssessments.from_mlflow_entity`):
    value, error and metadata as `json.dumps` text, stamped now unless the record has times,
    valid. A record without an id gets a new one."""
    now = int(time.time() * 1000)
    error = record.error
    run_id = record.run_id
    if run_id is None and record.metadata and SOURCE_RUN_ID in record.metadata:
        run_id = record.metadata[SOURCE_RUN_ID]  # as Assessment.__post_init__
    aggregate_value, is_numeric_value = assessment_aggregate(record.value)
    return {
        "assessment_id": record.assessment_id or new_assessment_id(),
        "trace_id": record.trace_id,
        "name": record.name,
        "assessment_type": "feedback",
        "value": json.dumps(record.value),
        "error": None
        if error is None
        else json.dumps(
            {
                "error_code": error.error_code,
                "error_message": error.error_message,
                "stack_trace": record.extra.get("stack_trace"),
            }
        ),
        "created_timestamp": record.create_time_ms or now,
        "last_updated_timestamp": record.last_update_time_ms or now,
        "experiment_id": experiment_id,
        "trace_timestamp_ms": trace_timestamp_ms,
        "aggregate_value": aggregate_value,
        "is_numeric_value": is_numeric_value,
        "source_type": source_type(record.source.source_type),
        "source_id": record.source.source_id,
        "run_id": run_id,
        "span_id": record.span_id,
        "rationale": record.rationale,
        "overrides": record.overrides,
        "valid": True,
        "assessment_metadata": json.dumps(record.metadata) if record.metadata else None,
    }


def feedback_from_row(row: Mapping[str, Any]) -> FeedbackRecord:
    """A feedback `assessments` row read back, as `SqlAssessments.to_mlflow_entity` reads it."""
    if row["assessment_type"] != "feedback":
        raise ValueError(f"assessment {row['assessment_id']} is {row['assessment_type']!r}")
    error = json.loads(row["error"]) if row["error"] is not None else None
    metadata = row["assessment_metadata"]
    extra = {"stack_trace": error["stack_trace"]} if error and error.get("stack_trace") else {}
    return FeedbackRecord(
        trace_id=row["trace_id"],
        source=FeedbackSource(row["source_type"], row["source_id"]),
        name=row["name"],
        value=json.loads(row["value"]),
        error=None
        if error is None
        else FeedbackError(error["error_code"], error.get("error_message")),
        rationale=row["rationale"],
        metadata=json.loads(metadata) if metadata is not None else None,
        overrides=row["overrides"],
        assessment_id=row["assessment_id"],
        valid=bool(row["valid"]),
        create_time_ms=row["created_timestamp"],
        last_update_time_ms=row["last_updated_timestamp"],
        span_id=row["span_id"],
        run_id=row["run_id"],
        extra=extra,
    )
