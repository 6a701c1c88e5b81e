"""Traces and verdicts written into MLflow's SQLite store with the standard library.

The same rows MLflow's `log_spans`, `link_traces_to_run` and `create_assessment` write
(built by `mlflow_rows`), inserted over a `sqlite3.Connection` the caller opened: no MLflow,
SQLAlchemy or OpenTelemetry import, which alone cost more CPU than a run's whole record.
Each write is one transaction, begun IMMEDIATE so that checking what is stored and inserting
what is not happen under the same write lock; it commits, or rolls back on any error.
The caller handles a locked database (retries) and refuses this path when MLflow's SQL
trace rollups are on (`rollups_enabled`), since those need queue rows these writes do not
add.
"""

from __future__ import annotations

import operator
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from llm_eval.tracking.feedback import FeedbackRecord
from llm_eval.tracking.mlflow_rows import (
    TraceRows,
    TraceSpans,
    assessment_row,
    feedback_from_row,
    link_row,
    trace_rows,
)
from llm_eval.tracking.mlflow_rules import env_flag

ROLLUPS_SWITCH = "MLFLOW_SQL_TRACE_ROLLUPS_ENABLED"
"""What `mlflow.store.tracking.utils.sql_trace_rollups.rollups_enabled` reads (default off)."""

CHUNK = 500
"""Ids per `IN (...)`: under SQLite's limit on bound variables."""


def rollups_enabled() -> bool:
    """Whether MLflow's opt-in SQL trace rollups are on (then MLflow's API must write)."""
    return env_flag(ROLLUPS_SWITCH, False)


@contextmanager
def write_transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """One write transaction: foreign keys checked (as MLflow's sessions have them), the
    write lock taken first, committed at the end or rolled back on error."""
    conn.execute("PRAGMA foreign_keys = ON")  # a no-op inside a transaction, so first
    with conn:
        conn.execute("BEGIN IMMEDIATE")
        yield


def _chunks(items: Sequence[str]) -> Iterator[list[str]]:
    for start in range(0, len(items), CHUNK):
        yield list(items[start : start + CHUNK])


def _marks(count: int) -> str:
    return ", ".join("?" * count)


def _insert(conn: sqlite3.Connection, table: str, rows: Sequence[Mapping[str, Any]]) -> None:
    """One executemany for rows that all have the same columns."""
    if not rows:
        return
    columns = list(rows[0])
    sql = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({_marks(len(columns))})"
    values = operator.itemgetter(*columns)  # one C call per row, not a generator
    conn.executemany(sql, [values(row) for row in rows] if len(columns) > 1 else
                     [(row[columns[0]],) for row in rows])  # fmt: skip


def stored_trace_ids(conn: sqlite3.Connection, trace_ids: Sequence[str]) -> set[str]:
    """Which of `trace_ids` the store holds."""
    found: set[str] = set()
    for chunk in _chunks(trace_ids):
        query = f"SELECT request_id FROM trace_info WHERE request_id IN ({_marks(len(chunk))})"
        found.update(trace_id for (trace_id,) in conn.execute(query, chunk))
    return found


def write_traces(
    conn: sqlite3.Connection,
    experiment_id: str,
    artifact_root: str,
    run_id: str | None,
    traces: Sequence[TraceSpans],
) -> None:
    """Insert the traces, their spans and tags, and link them to `run_id` (if any), in one
    transaction. Traces already stored are left alone: writing is idempotent.

    `artifact_root` is the experiment's artifact location (the traces' location tags).
    """
    if not traces:
        return
    experiment = int(experiment_id)
    with write_transaction(conn):
        stored = stored_trace_ids(conn, [trace.trace_id for trace in traces])
        new = [trace for trace in traces if trace.trace_id not in stored]
        rows = [trace_rows(trace, experiment, artifact_root, False) for trace in new]
        insert_trace_rows(conn, rows, run_id)


def insert_trace_rows(
    conn: sqlite3.Connection, rows: Sequence[TraceRows], run_id: str | None
) -> None:
    """Insert traces' built rows (`trace_rows`) and their links to `run_id` (if any),
    inside the caller's `write_transaction`."""
    _insert(conn, "trace_info", [row.info for row in rows])
    _insert(conn, "trace_tags", [tag for row in rows for tag in row.tags])
    _insert(conn, "spans", [span for row in rows for span in row.spans])
    if run_id is not None:
        links = [link_row(row.info["request_id"], run_id) for row in rows]
        _insert(conn, "entity_associations", links)


def valid_assessments(
    conn: sqlite3.Connection, trace_ids: Sequence[str], name: str
) -> dict[str, list[FeedbackRecord]]:
    """The valid (not overridden) assessments called `name` on each of `trace_ids`, in the
    order the store returns them (the query `sql_writes` makes)."""
    found: dict[str, list[FeedbackRecord]] = {}
    for chunk in _chunks(trace_ids):
        cursor = conn.execute(
            f"SELECT * FROM assessments WHERE trace_id IN ({_marks(len(chunk))}) "
            "AND name = ? AND valid IS 1",
            [*chunk, name],
        )
        columns = [column[0] for column in cursor.description]
        for values in cursor:
            record = feedback_from_row(dict(zip(columns, values, strict=True)))
            found.setdefault(record.trace_id, []).append(record)
    return found


def write_assessments(
    conn: sqlite3.Connection,
    records: Sequence[FeedbackRecord],
    invalidate: Sequence[str] = (),
) -> None:
    """Insert feedback on stored traces and mark the assessments `invalidate` names as no
    longer valid, in one transaction (as `create_assessment` with `overrides` would).

    Raises ValueError, writing nothing, when a record's trace is not in the store.
    """
    if not records and not invalidate:
        return
    trace_ids = sorted({record.trace_id for record in records})
    with write_transaction(conn):
        for chunk in _chunks(invalidate):
            marks = _marks(len(chunk))
            conn.execute(
                f"UPDATE assessments SET valid = 0 WHERE assessment_id IN ({marks})", chunk
            )
        traces: dict[str, tuple[int, int]] = {}
        for chunk in _chunks(trace_ids):
            query = (
                "SELECT request_id, experiment_id, timestamp_ms FROM trace_info "
                f"WHERE request_id IN ({_marks(len(chunk))})"
            )
            traces.update({trace: (exp, ts) for trace, exp, ts in conn.execute(query, chunk)})
        if missing := [trace_id for trace_id in trace_ids if trace_id not in traces]:
            raise ValueError(f"assessments for traces not in the store: {missing[:3]}")
        rows = [assessment_row(record, *traces[record.trace_id]) for record in records]
        _insert(conn, "assessments", rows)
