"""Traces and assessments written to MLflow's SQL store as a few bulk inserts.

MLflow's own `log_spans` and `log_feedback` spend about 3 ms and 2.5 ms of ORM work per row
(a flush per trace, a SELECT-then-INSERT per tag, one transaction per assessment). For a
2,000-row run that is longer than the run itself. Here the same rows are built by
`mlflow_rows` (MLflow's previews, token and cost aggregation, tag and name validation and
assessment serialisation, repeated in plain Python) and inserted with one executemany per
table in a single transaction, through the store's own engine and table definitions: about
0.3 ms per trace. This path serves every SQL database MLflow supports; the local SQLite
store can take the same rows without importing MLflow at all (`sqlite_traces`).

This module uses MLflow's private names (the ORM models, the run check). `tests/tracking/
test_sql_writes.py` writes the same traces and verdicts through MLflow's API, through here
and through `sqlite_traces`, and checks that every column of every table comes out the same,
so an MLflow upgrade that changes what the store writes fails that test instead of leaving
traces the UI reads differently. Stores this cannot write (a tracking server over HTTP, SQL
trace rollups switched on, or an MLflow without these names) get `None` from `sql_store`,
and the callers use MLflow's public API instead (`record.py`; tested with a name hidden).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from llm_eval.tracking.mlflow_rows import (
    SpanRecord,
    TraceSpans,
    assessment_row,
    feedback_from_row,
    link_row,
    trace_rows,
)

if TYPE_CHECKING:
    from mlflow import MlflowClient
    from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore

    from llm_eval.tracking.feedback import FeedbackRecord

__all__ = [
    "DISABLE_SWITCH",
    "SpanRecord",
    "TraceSpans",
    "bulk_write",
    "sql_store",
    "stored_trace_ids",
    "valid_assessments",
    "write_assessments",
    "write_traces",
]

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
    from mlflow.store.db.db_types import MSSQL  # noqa: F401
    from mlflow.store.tracking.dbmodels.models import (  # noqa: F401
        SqlAssessments,
        SqlEntityAssociation,
        SqlSpan,
        SqlTraceInfo,
        SqlTraceTag,
    )
    from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore

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
            rows = trace_rows(trace, int(experiment_id), artifact_root, ascii_only)
            infos.append(rows.info)
            tags += rows.tags
            spans += rows.spans
            if run_id is not None:
                links.append(link_row(trace.trace_id, run_id))
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
) -> dict[str, list[FeedbackRecord]]:
    """The valid (not overridden) assessments called `name` on each of `trace_ids`."""
    from mlflow.store.tracking.dbmodels.models import SqlAssessments
    from sqlalchemy import select

    table = SqlAssessments.__table__
    found: dict[str, list[FeedbackRecord]] = {}
    with store.ManagedSessionMaker() as session:
        for chunk in _chunks(list(trace_ids)):
            query = select(table).where(
                table.c.trace_id.in_(chunk), table.c.name == name, table.c.valid.is_(True)
            )
            for row in session.execute(query):
                record = feedback_from_row(row._mapping)
                found.setdefault(record.trace_id, []).append(record)
    return found


def write_assessments(
    store: SqlAlchemyStore, records: Sequence[FeedbackRecord], invalidate: Sequence[str] = ()
) -> None:
    """Insert feedback on existing traces and mark the assessments `invalidate` names as no
    longer valid, in one transaction (as `create_assessment` with `overrides` would)."""
    from mlflow.store.tracking.dbmodels.models import SqlAssessments, SqlTraceInfo
    from sqlalchemy import insert

    if not records and not invalidate:
        return
    trace_ids = sorted({record.trace_id for record in records})
    with store.ManagedSessionMaker(read_only=False) as session:
        for chunk in _chunks(list(invalidate)):
            session.query(SqlAssessments).filter(SqlAssessments.assessment_id.in_(chunk)).update(
                {"valid": False}, synchronize_session=False
            )
        traces: dict[str, tuple[int, int]] = {}
        for chunk in _chunks(trace_ids):
            query = session.query(
                SqlTraceInfo.request_id, SqlTraceInfo.experiment_id, SqlTraceInfo.timestamp_ms
            ).filter(SqlTraceInfo.request_id.in_(chunk))
            traces.update({trace_id: (exp, ts) for trace_id, exp, ts in query})
        if missing := [trace_id for trace_id in trace_ids if trace_id not in traces]:
            raise ValueError(f"assessments for traces not in the store: {missing[:3]}")
        rows = [assessment_row(record, *traces[record.trace_id]) for record in records]
        if rows:
            session.execute(insert(SqlAssessments.__table__), rows)
