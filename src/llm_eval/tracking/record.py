"""Reconcile the MLflow store with a trace file: every row traced once, every verdict current.

The trace file is the record; the store is brought to match it. `run` writes the traces its
rows lack (its own new rows, and rows an interrupted earlier run never logged), `--resume`
likewise, `score` first writes any trace still missing and then the verdicts. What the store
already holds is found by trace id (`identity`), never by which MLflow run is the latest, so
a queue of experiments, an ad-hoc run in between, or a second `score` cannot mix them up.
A repair is reported in one line with its counts.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from llm_eval.tracking import store
from llm_eval.tracking.identity import RUN_ID_TAG, trace_id_of, trace_key
from llm_eval.tracking.sqlite_store import SqliteRecordClient

if TYPE_CHECKING:
    from mlflow import MlflowClient

    from llm_eval.schemas import RowKey, TraceRow
    from llm_eval.tracking.assessments import VerdictCounts
    from llm_eval.tracking.feedback import StoredFeedback
    from llm_eval.tracking.store import RecordClient


@dataclass
class StoreView:
    """What the store holds for some rows: their stored trace ids, and the valid `correct`
    assessments on those traces by trace id (when asked for)."""

    traces: set[str] = field(default_factory=set)
    verdicts: Mapping[str, Sequence[StoredFeedback]] = field(default_factory=dict)


def unique_rows(rows: Sequence[TraceRow]) -> list[TraceRow]:
    """One row per key (the last one wins), in file order."""
    return list({trace_key(row): row for row in rows}.values())


def store_view(
    client: RecordClient, experiment_id: str, rows: Sequence[TraceRow], *, verdicts: bool
) -> StoreView:
    """Look up the rows' traces (and verdicts) in the store."""
    ids = [trace_id_of(trace_key(row)) for row in rows]
    if isinstance(client, SqliteRecordClient):
        return _sqlite_view(client, ids, verdicts)
    from llm_eval.tracking.assessments import FEEDBACK_NAME
    from llm_eval.tracking.sql_writes import sql_store, stored_trace_ids, valid_assessments

    sql = sql_store(client)
    if sql is None:
        return _api_view(client, experiment_id, rows, set(ids), verdicts)
    view = StoreView(traces=store.with_retry(lambda: stored_trace_ids(sql, ids)))
    if verdicts:
        view.verdicts = store.with_retry(lambda: valid_assessments(sql, ids, FEEDBACK_NAME))
    return view


def _sqlite_view(client: SqliteRecordClient, ids: list[str], verdicts: bool) -> StoreView:
    """The same view read with `sqlite3` from the local store (`sqlite_traces`)."""
    from llm_eval.tracking import sqlite_traces
    from llm_eval.tracking.assessments import FEEDBACK_NAME

    connection = client.connection
    view = StoreView(
        traces=store.with_retry(partial(sqlite_traces.stored_trace_ids, connection, ids))
    )
    if verdicts:
        found = partial(sqlite_traces.valid_assessments, connection, ids, FEEDBACK_NAME)
        view.verdicts = dict(store.with_retry(found))
    return view


def _api_view(
    client: MlflowClient,
    experiment_id: str,
    rows: Sequence[TraceRow],
    wanted: set[str],
    verdicts: bool,
) -> StoreView:
    """The same view through MLflow's public search, one query per run id of the rows."""
    from llm_eval.tracking.assessments import FEEDBACK_NAME

    view = StoreView()
    found: dict[str, list[StoredFeedback]] = {}
    for run_id in sorted({row.run_id for row in rows}):
        for info in search_trace_infos(client, experiment_id, run_id):
            if info.trace_id not in wanted:
                continue
            view.traces.add(info.trace_id)
            if verdicts:
                current = [a for a in info.assessments if a.name == FEEDBACK_NAME and a.valid]
                if current:
                    found[info.trace_id] = current
    view.verdicts = found
    return view


def search_trace_infos(client: MlflowClient, experiment_id: str, run_id: str) -> list[Any]:
    """Every trace tagged with the results' run id (its `TraceInfo`, with tags and
    assessments), through `MlflowClient.search_traces`."""
    found: list[Any] = []
    page_token = None
    while True:
        search = partial(
            client.search_traces,
            locations=[experiment_id],
            filter_string=f"tags.`{RUN_ID_TAG}` = '{run_id}'",
            max_results=500,
            page_token=page_token,
            include_spans=False,
        )
        page = store.with_retry(search)
        found += [trace.info for trace in page]
        page_token = page.token
        if not page_token:
            return found


@dataclass(frozen=True)
class TraceCounts:
    """What reconciling the traces of some rows did."""

    rows: int
    written: int
    repaired: int
    """Of those written, traces of rows an earlier run made (and failed to log)."""


def reconcile_traces(
    client: RecordClient,
    experiment_id: str,
    link_run: str | None,
    rows: Sequence[TraceRow],
    view: StoreView,
    *,
    new_rows: Collection[RowKey] | None = None,
) -> TraceCounts:
    """Write the traces of `rows` the store lacks, linked to MLflow run `link_run`.

    `new_rows`: keys of rows made just now (their traces are new, not repairs).
    """
    from llm_eval.tracking.bulk_traces import log_rows_as_traces

    missing = [row for row in rows if trace_id_of(trace_key(row)) not in view.traces]
    if missing:
        shifts = simulated_shifts(missing)
        log_rows_as_traces(client, experiment_id, link_run, missing, shift_ns=shifts)
        view.traces.update(trace_id_of(trace_key(row)) for row in missing)
    repaired = sum(new_rows is None or row.key not in new_rows for row in missing)
    return TraceCounts(len(rows), len(missing), repaired)


def simulated_shifts(rows: Sequence[TraceRow]) -> list[int]:
    """A simulated row's clock starts in 2000 (it is simulated, not measured); its trace is
    placed at the time of logging instead, keeping its simulated durations."""
    from llm_eval.tracking.traces import to_ns

    now_ns = time.time_ns()
    return [now_ns - (to_ns(row.started_at) or now_ns) if row.simulated else 0 for row in rows]


def reconcile_verdicts(
    client: RecordClient, rows: Sequence[TraceRow], view: StoreView
) -> VerdictCounts:
    """Give every row's trace its current verdict (the traces must be stored), and the rows
    a person or the judge settled that verdict too, beside it."""
    from llm_eval.tracking.assessments import log_verdicts
    from llm_eval.tracking.decisions import log_decisions

    counts = log_verdicts(client, rows, view.verdicts)
    log_decisions(client, rows, view.verdicts)
    return counts


def say_repairs(
    source: str, traces: TraceCounts, verdicts: VerdictCounts | None = None
) -> str | None:
    """The one line that reports a repair (or a replaced verdict); None when there was none."""
    parts = []
    if traces.repaired:
        parts.append(f"{traces.repaired} missing trace(s) written")
    if verdicts is not None and verdicts.replaced:
        parts.append(f"{verdicts.replaced} earlier verdict(s) replaced")
    if not parts:
        return None
    line = f"MLflow record of {source}: {', '.join(parts)} ({traces.rows} rows)"
    print(line, file=sys.stderr)
    return line
