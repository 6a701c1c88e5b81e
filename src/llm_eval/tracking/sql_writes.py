"""Traces and assessments written to MLflow's SQL store as a few bulk inserts.

MLflow's own `log_spans` and `log_feedback` spend about 3 ms and 2.5 ms of ORM work per row
(a flush per trace, a SELECT-then-INSERT per tag, one transaction per assessment). For a
2,000-row run that is longer than the run itself. Here the same rows are computed with
MLflow's own helpers (previews, token and cost aggregation, tag and name validation,
`SqlAssessments.from_mlflow_entity`) and inserted with one executemany per table in a single
transaction, through the store's own engine and table definitions: about 0.3 ms per trace.

This is the only module that uses MLflow's private names (underscored functions, the ORM
models). `tests/tracking/test_sql_writes.py` writes the same traces and verdicts both ways and
checks that every column of every table comes out the same, so an MLflow upgrade that changes
what the store writes fails that test instead of leaving traces the UI reads differently.
Stores this cannot write (a tracking server over HTTP, SQL trace rollups switched on, or an
MLflow without these names) get `None` from `sql_store`, and the callers use MLflow's public
API instead (`record.py`; tested with these names hidden).
"""

from __future__ import annotations

import base64
import functools
import json
import os
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from mlflow import MlflowClient
    from mlflow.entities import Assessment
    from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore


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


@dataclass(frozen=True)
class TraceSpans:
    """One trace to write: its id, its spans (root first) and its tags."""

    trace_id: str
    spans: Sequence[SpanRecord]
    tags: dict[str, str]


DISABLE_SWITCH = "LLM_EVAL_MLFLOW_SQL"
"""Set to 0 to write every trace and verdict through MLflow's public API."""


def sql_store(client: MlflowClient) -> SqlAlchemyStore | None:
    """The client's store when it is MLflow's SQL store and bulk writes keep it consistent;
    None when they cannot (another store, or an MLflow without the names used here)."""
    if os.environ.get(DISABLE_SWITCH, "1") == "0":
        return None
    try:
        from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore
        from mlflow.store.tracking.utils.sql_trace_rollups import rollups_enabled
        from mlflow.tracing.client import TracingClient

        _check_private_names()
    except (ImportError, AttributeError):
        return None
    store = TracingClient(client.tracking_uri).store
    if isinstance(store, SqlAlchemyStore) and not rollups_enabled():
        return store
    return None


def _check_private_names() -> None:
    """Import every private name the writes below use, so a missing one shows up here (and
    the API path is taken) rather than halfway through a write."""
    from mlflow.store.tracking.dbmodels.models import (  # noqa: F401
        SqlAssessments,
        SqlEntityAssociation,
        SqlSpan,
        SqlTraceInfo,
        SqlTraceTag,
    )
    from mlflow.store.tracking.sqlalchemy_store import (  # noqa: F401
        SqlAlchemyStore,
        _span_aggregation_node,
        _try_parse_json_string,
    )
    from mlflow.tracing.utils.truncation import _get_truncated_preview  # noqa: F401
    from mlflow.utils.validation import _validate_trace_tag  # noqa: F401

    if not hasattr(SqlAlchemyStore, "_validate_run_accessible"):
        raise AttributeError("SqlAlchemyStore._validate_run_accessible")


def bulk_write(write: Callable[[], object], what: str) -> bool:
    """Run one bulk insert, again while the database is locked (`store.with_retry`: each try
    is one transaction, rolled back when it fails); False, with a warning, if it still failed
    and the caller must write the same rows through MLflow's API instead."""
    from llm_eval.tracking.store import with_retry

    try:
        with_retry(write)
        return True
    except Exception as exc:
        print(f"warning: bulk {what} insert failed ({type(exc).__name__}); "
              f"logging the {what}s through MLflow's API", file=sys.stderr)  # fmt: skip
        return False


def write_traces(
    store: SqlAlchemyStore,
    experiment_id: str,
    artifact_root: str,
    run_id: str | None,
    traces: Sequence[TraceSpans],
) -> None:
    """Insert the traces, their spans and tags, and link them to `run_id` (if any), in one
    transaction. Traces already stored are left alone: writing is idempotent.

    `artifact_root` is the experiment's artifact location (the traces' location tags).
    """
    from mlflow.store.db.db_types import MSSQL
    from mlflow.store.tracking.dbmodels.models import (
        SqlEntityAssociation,
        SqlSpan,
        SqlTraceInfo,
        SqlTraceTag,
    )
    from sqlalchemy import insert

    if not traces:
        return
    infos: list[dict[str, Any]] = []
    tags: list[dict[str, Any]] = []
    spans: list[dict[str, Any]] = []
    links: list[dict[str, Any]] = []
    ascii_only = store.db_type == MSSQL  # as `log_spans`: MSSQL's column is not Unicode
    with store.ManagedSessionMaker(read_only=False) as session:
        if run_id is not None:
            store._validate_run_accessible(session, run_id)
        stored = _stored_ids(session, [trace.trace_id for trace in traces])
        for trace in traces:
            if trace.trace_id in stored:
                continue
            infos.append(_trace_info_row(trace, int(experiment_id)))
            tags += _tag_rows(trace, artifact_root)
            spans += [_span_row(span, int(experiment_id), ascii_only) for span in trace.spans]
            if run_id is not None:
                links.append(_link_row(trace.trace_id, run_id))
        if not infos:
            return
        session.execute(insert(SqlTraceInfo.__table__), infos)
        session.execute(insert(SqlTraceTag.__table__), tags)
        session.execute(insert(SqlSpan.__table__), spans)
        if links:
            session.execute(insert(SqlEntityAssociation.__table__), links)


def stored_trace_ids(store: SqlAlchemyStore, trace_ids: Sequence[str]) -> set[str]:
    """Which of `trace_ids` the store holds."""
    with store.ManagedSessionMaker() as session:
        return _stored_ids(session, trace_ids)


def _stored_ids(session: Any, trace_ids: Sequence[str]) -> set[str]:
    from mlflow.store.tracking.dbmodels.models import SqlTraceInfo

    found: set[str] = set()
    for chunk in _chunks(list(trace_ids)):
        query = session.query(SqlTraceInfo.request_id).filter(SqlTraceInfo.request_id.in_(chunk))
        found.update(trace_id for (trace_id,) in query)
    return found


def _chunks(items: list[str], size: int = 500) -> list[list[str]]:
    """Slices small enough for SQLite's limit on bound variables."""
    return [items[start : start + size] for start in range(0, len(items), size)]


def valid_assessments(
    store: SqlAlchemyStore, trace_ids: Sequence[str], name: str
) -> dict[str, list[Assessment]]:
    """The valid (not overridden) assessments called `name` on each of `trace_ids`."""
    from mlflow.store.tracking.dbmodels.models import SqlAssessments

    found: dict[str, list[Assessment]] = {}
    with store.ManagedSessionMaker() as session:
        for chunk in _chunks(list(trace_ids)):
            query = session.query(SqlAssessments).filter(
                SqlAssessments.trace_id.in_(chunk),
                SqlAssessments.name == name,
                SqlAssessments.valid.is_(True),
            )
            for row in query:
                found.setdefault(row.trace_id, []).append(row.to_mlflow_entity())
    return found


def write_assessments(
    store: SqlAlchemyStore, assessments: Sequence[Assessment], invalidate: Sequence[str] = ()
) -> None:
    """Insert assessments on existing traces and mark the assessments `invalidate` names as
    no longer valid, in one transaction (as `create_assessment` with `overrides` would)."""
    from mlflow.store.tracking.dbmodels.models import SqlAssessments, SqlTraceInfo

    if not assessments and not invalidate:
        return
    trace_ids = sorted({a.trace_id for a in assessments if a.trace_id is not None})
    with store.ManagedSessionMaker(read_only=False) as session:
        for chunk in _chunks(list(invalidate)):
            session.query(SqlAssessments).filter(SqlAssessments.assessment_id.in_(chunk)).update(
                {"valid": False}, synchronize_session=False
            )
        traces: dict[str, tuple[int, int]] = {}
        for start in range(0, len(trace_ids), 500):  # stay under SQLite's variable limit
            chunk = trace_ids[start : start + 500]
            query = session.query(
                SqlTraceInfo.request_id, SqlTraceInfo.experiment_id, SqlTraceInfo.timestamp_ms
            ).filter(SqlTraceInfo.request_id.in_(chunk))
            traces.update({trace_id: (exp, ts) for trace_id, exp, ts in query})
        if missing := [trace_id for trace_id in trace_ids if trace_id not in traces]:
            raise ValueError(f"assessments for traces not in the store: {missing[:3]}")
        rows = []
        for assessment in assessments:
            row = SqlAssessments.from_mlflow_entity(assessment)
            row.experiment_id, row.trace_timestamp_ms = traces[row.trace_id]
            rows.append(row)
        session.add_all(rows)


# --------------------------------------------------------------------------- rows


def _span_row(span: SpanRecord, experiment_id: int, ascii_only: bool) -> dict[str, Any]:
    """The `spans` row as `log_spans` builds it, the span dictionary in its `content`.

    The dictionary is `Span.to_dict()`'s. `log_spans` first passes it through MLflow's
    OpenTelemetry translation, which maps other tracers' attribute names onto MLflow's; these
    spans already use MLflow's names, so it would change nothing (the column-for-column test
    against `log_spans` holds that true) and is skipped: it was most of the cost per span.
    """
    from mlflow.store.tracking.utils.trace_analytics import finite_float_or_none
    from mlflow.tracing.constant import SpanAttributeKey
    from mlflow.tracing.utils import TraceJSONEncoder

    attributes = span.attributes
    span_dict: dict[str, Any] = {
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
            cost = {}
    row = {
        "trace_id": span.trace_id,
        "experiment_id": experiment_id,
        "span_id": f"{span.span_id:016x}",
        "parent_span_id": _hex_id(span.parent_id),
        "name": span.name,
        "type": span.span_type,
        "status": "ERROR" if span.error else "OK",
        "start_time_unix_nano": span.start_ns,
        "end_time_unix_nano": span.end_ns,
        "content": json.dumps(span_dict, cls=TraceJSONEncoder, ensure_ascii=ascii_only),
        "input_cost": finite_float_or_none(cost.get("input_cost")),
        "output_cost": finite_float_or_none(cost.get("output_cost")),
        "total_cost": finite_float_or_none(cost.get("total_cost")),
        "model_name": _model_dimension(attributes.get(SpanAttributeKey.MODEL)),
        "model_provider": _model_dimension(attributes.get(SpanAttributeKey.MODEL_PROVIDER)),
    }
    return row


def _hex_id(span_id: int | None) -> str | None:
    """A span id as MLflow's columns hold it: 16 hex digits."""
    return f"{span_id:016x}" if span_id is not None else None


def _model_dimension(raw: str | None) -> str | None:
    """A model name or provider column, as `log_spans` fills it from the span's attribute."""
    from mlflow.store.tracking.sqlalchemy_store import _try_parse_json_string
    from mlflow.store.tracking.utils.trace_analytics import bounded_model_dimension

    if raw is None:
        return None
    return bounded_model_dimension(_try_parse_json_string(raw))


def _base64(value: int, size: int) -> str:
    """An OpenTelemetry id as `Span.to_dict` writes it: big-endian bytes in base64."""
    return base64.b64encode(value.to_bytes(size, "big")).decode("ascii")


def _trace_info_row(trace: TraceSpans, experiment_id: int) -> dict[str, Any]:
    """The `trace_info` row `log_spans` leaves for a trace it created from these spans."""
    from mlflow.entities.trace_state import TraceState
    from mlflow.store.tracking.sqlalchemy_store import _span_aggregation_node
    from mlflow.store.tracking.utils.trace_analytics import (
        COST_COLUMN_BY_KEY,
        TOKEN_COLUMN_BY_KEY,
        finite_float_or_none,
        token_count_or_none,
        validate_trace_name,
    )
    from mlflow.tracing.constant import SpanAttributeKey, TraceTagKey
    from mlflow.tracing.utils import (
        aggregate_cost_from_span_nodes,
        aggregate_usage_from_span_nodes,
    )
    from mlflow.tracing.utils.truncation import _get_truncated_preview

    root = next(span for span in trace.spans if span.parent_id is None)
    start_ms = min(span.start_ns for span in trace.spans) // 1_000_000
    end_ms = max(span.end_ns for span in trace.spans) // 1_000_000
    failed = root.error
    attributes = root.attributes
    row: dict[str, Any] = {
        "request_id": trace.trace_id,
        "experiment_id": experiment_id,
        "timestamp_ms": start_ms,
        "execution_time_ms": end_ms - start_ms,
        "status": (TraceState.ERROR if failed else TraceState.OK).value,
        "client_request_id": None,
        "request_preview": None,
        "response_preview": None,
        # `log_spans` inserts 0 and bumps it once for the span write.
        "db_payload_generation": 1,
        "trace_name": validate_trace_name(trace.tags.get(TraceTagKey.TRACE_NAME)),
        "session_id": None,
    }
    if inputs := attributes.get(SpanAttributeKey.INPUTS):
        row["request_preview"] = _get_truncated_preview(inputs, role="user")
    if outputs := attributes.get(SpanAttributeKey.OUTPUTS):
        row["response_preview"] = _get_truncated_preview(outputs, role="assistant")

    def nodes(key: str) -> list[Any]:
        return [
            _span_aggregation_node(f"{s.span_id:016x}", _hex_id(s.parent_id), s.attributes, key)
            for s in trace.spans
        ]

    usage = aggregate_usage_from_span_nodes(nodes(SpanAttributeKey.CHAT_USAGE)) or {}
    for key, column in TOKEN_COLUMN_BY_KEY.items():
        row[column] = token_count_or_none(usage.get(key))
    cost = aggregate_cost_from_span_nodes(nodes(SpanAttributeKey.LLM_COST)) or {}
    for key, column in COST_COLUMN_BY_KEY.items():
        row[column] = finite_float_or_none(cost.get(key))
    return row


def _tag_rows(trace: TraceSpans, artifact_root: str) -> list[dict[str, Any]]:
    """Artifact location, spans location and the caller's tags, validated as MLflow does."""
    from mlflow.tracing.constant import SpansLocation, TraceTagKey
    from mlflow.utils.mlflow_tags import MLFLOW_ARTIFACT_LOCATION
    from mlflow.utils.validation import _validate_trace_tag

    location = _location_template(artifact_root).replace(_PLACEHOLDER_ID, trace.trace_id)
    values = {
        MLFLOW_ARTIFACT_LOCATION: location,
        TraceTagKey.SPANS_LOCATION: SpansLocation.TRACKING_STORE.value,
    }
    for key, value in trace.tags.items():
        if key != TraceTagKey.TRACE_NAME:
            key, value = cast(Callable[..., tuple[str, str]], _validate_trace_tag)(key, value)
            values[key] = value
    return [{"request_id": trace.trace_id, "key": k, "value": v} for k, v in values.items()]


_PLACEHOLDER_ID = "tr-" + "0" * 32
"""A trace id of the shape every trace id has (`identity`), to build a location once."""


@functools.lru_cache(maxsize=8)
def _location_template(artifact_root: str) -> str:
    """The traces' artifact location under `artifact_root`, for `_PLACEHOLDER_ID`: MLflow's
    URI join parses the root each time, which was a fifth of the cost of a trace."""
    from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore
    from mlflow.utils.uri import append_to_uri_path

    return cast(Callable[..., str], append_to_uri_path)(
        artifact_root,
        SqlAlchemyStore.TRACE_FOLDER_NAME,
        _PLACEHOLDER_ID,
        SqlAlchemyStore.ARTIFACTS_FOLDER_NAME,
    )


def _link_row(trace_id: str, run_id: str) -> dict[str, Any]:
    from mlflow.entities.entity_type import EntityAssociationType

    return {
        "association_id": uuid.uuid4().hex,
        "source_type": EntityAssociationType.TRACE,
        "source_id": trace_id,
        "destination_type": EntityAssociationType.RUN,
        "destination_id": run_id,
        "created_time": time.time_ns() // 1_000_000,
    }
