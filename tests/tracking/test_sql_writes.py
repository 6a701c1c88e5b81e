"""Bulk inserts write exactly what MLflow's own API writes, column for column.

The same rows (from real mock runs: tool calls, multi-turn, AIMO3 rounds, provider errors;
plus rows with cost, long Greek text, a provider's JSON error body and a simulated clock)
are logged as traces and verdicts three times, into three fresh SQLite stores: once through
MLflow's `log_spans`, `link_traces_to_run` and `log_assessment`, once through `sql_writes`
(SQLAlchemy), once through `sqlite_traces` (the standard library's `sqlite3`, rows built by
`mlflow_rows` without MLflow). Every table must hold the same rows, apart from the ids and
clocks MLflow draws itself. An MLflow upgrade that changes what its store writes fails here.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from llm_eval.runner.trace_io import read_rows
from llm_eval.schemas import CallRecord, TraceRow, Usage
from llm_eval.tracking.sql_writes import DISABLE_SWITCH
from tests.conftest import REPO
from tests.support.rows import make_row
from tests.tracking.test_tracking import llm_eval, make_suite

slow = pytest.mark.slow
WAYS = ("sql_writes", "sqlite_traces")
"""The two ways besides MLflow's API that write the store; each must match the API's rows."""

IGNORED_COLUMNS = {
    # Drawn by MLflow or the clock on each write, not derived from the rows.
    "entity_associations": {"association_id", "created_time", "destination_id"},
    "assessments": {"assessment_id", "created_timestamp", "last_updated_timestamp"},
}
COMPARED_TABLES = (
    "trace_info",
    "trace_tags",
    "trace_request_metadata",
    "spans",
    "entity_associations",
    "assessments",
)


@pytest.fixture(scope="module")
def rows(tmp_path_factory: pytest.TempPathFactory) -> list[TraceRow]:
    root = make_suite(tmp_path_factory.mktemp("sql_writes") / "suite")
    found: list[TraceRow] = []
    for epoch, model in enumerate(("mock-varied", "mock-flaky")):
        benchmarks = ("sample_tools", "sample_multiturn", "aimo3_reference_multiturn")
        args = [arg for name in benchmarks for arg in ("--benchmark", name)]
        output = f"{model}.jsonl"
        done = llm_eval(root, "run", "--model", model, *args, "--output", output,
                        LLM_EVAL_TRACKING="0")  # fmt: skip
        assert done.returncode in (0, 1), done.stdout + done.stderr
        # One model name, told apart by epoch: verdicts find traces by (benchmark, task, epoch).
        found += [
            row.model_copy(update={"model": "m", "epoch": epoch})
            for row in read_rows(root / output)
        ]
    cost = Usage(prompt_tokens=120, completion_tokens=30, total_tokens=150, cost_usd=0.00042)
    greek = "Καλησπέρα! Ο διαχειριστής είπε ότι την Πέμπτη κόβουν το νερό. " * 40
    found += [
        make_row(task_id="costed", usage=cost, calls=[CallRecord(latency_s=0.5, attempts=1,
                                                                 usage=cost)]),
        make_row(task_id="long", status="incorrect",
                 messages=[{"role": "user", "content": greek}], response=greek),
        make_row(task_id="failed", status="error", error_message="HTTP 503 from provider"),
        # JSON text inside a string attribute: MLflow strips one layer of encoding.
        make_row(task_id="json-error", status="error",
                 error_message='{"error": {"message": "overloaded", "code": 529}}'),
        make_row(task_id="simulated", simulated=True),
    ]  # fmt: skip
    assert any(row.status == "error" for row in found)
    assert any(row.tool_calls for row in found)
    return found


@contextlib.contextmanager
def api_only(on: bool) -> Iterator[None]:
    """Within: every write goes through MLflow's public API (`LLM_EVAL_MLFLOW_SQL=0`)."""
    previous = os.environ.get(DISABLE_SWITCH)
    if on:
        os.environ[DISABLE_SWITCH] = "0"
    try:
        yield
    finally:
        os.environ.pop(DISABLE_SWITCH, None)
        if previous is not None:
            os.environ[DISABLE_SWITCH] = previous


def write_one_way(rows: list[TraceRow], directory: Path, way: str) -> Path:
    """A fresh store holding the rows' traces (linked to a run) and verdicts, written by
    `way`: "api" (MLflow's public API), "sql_writes" or "sqlite_traces"."""
    from mlflow import MlflowClient

    from llm_eval.tracking.assessments import log_verdicts
    from llm_eval.tracking.bulk_traces import log_rows_as_traces

    db = directory / f"{way}.db"
    client = MlflowClient(tracking_uri=f"sqlite:///{db}")
    with api_only(way == "api"):
        experiment = client.create_experiment("e", artifact_location="file:///shared/artifacts")
        tags = {"llm_eval.stage": "run", "llm_eval.model": "m"}
        run = client.create_run(experiment, tags=tags)
        shifts = [1_000_000_000 * index for index in range(len(rows))]
        if way == "sqlite_traces":
            write_with_sqlite3(db, experiment, run.info.run_id, rows, shifts)
        else:
            log_rows_as_traces(client, experiment, run.info.run_id, rows, shift_ns=shifts)
            assert log_verdicts(client, rows, {}).written == len(rows)
    return db


def write_with_sqlite3(
    db: Path, experiment: str, run_id: str, rows: list[TraceRow], shifts: list[int]
) -> None:
    """The traces and verdicts `log_rows_as_traces` and `log_verdicts` write, through
    `sqlite_traces` (two batches, so a second transaction runs on the same connection)."""
    from llm_eval.tracking import sqlite_traces
    from llm_eval.tracking.assessments import verdict_feedback
    from llm_eval.tracking.bulk_traces import row_trace

    traces = [row_trace(row, experiment, shift) for row, shift in zip(rows, shifts, strict=True)]
    connection = sqlite3.connect(db, timeout=30)
    try:
        half = len(traces) // 2
        for batch in (traces[:half], traces[half:]):
            sqlite_traces.write_traces(connection, experiment, "file:///shared/artifacts",
                                       run_id, batch)  # fmt: skip
        verdicts = [verdict_feedback(t.trace_id, row) for t, row in zip(traces, rows, strict=True)]
        sqlite_traces.write_assessments(connection, verdicts, [])
    finally:
        connection.close()


def table_rows(db: Path, table: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db) as connection:
        columns = [c[1] for c in connection.execute(f"PRAGMA table_info('{table}')")]
        kept = [c for c in columns if c not in IGNORED_COLUMNS.get(table, set())]
        query = f"SELECT {', '.join(kept)} FROM '{table}'"
        return sorted(connection.execute(query).fetchall(), key=repr)


def row_counts(db: Path) -> dict[str, int]:
    with sqlite3.connect(db) as connection:
        query = "SELECT name FROM sqlite_master WHERE type = 'table'"
        tables = [name for (name,) in connection.execute(query)]
        return {t: connection.execute(f"SELECT count(*) FROM '{t}'").fetchone()[0] for t in tables}


@pytest.fixture(scope="module")
def stores(rows: list[TraceRow], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    directory = tmp_path_factory.mktemp("stores")
    return {way: write_one_way(rows, directory, way) for way in ("api", *WAYS)}


@slow
@pytest.mark.parametrize("way", WAYS)
def test_every_table_gets_as_many_rows_every_way(stores: dict[str, Path], way: str) -> None:
    assert row_counts(stores[way]) == row_counts(stores["api"])


@slow
@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("table", COMPARED_TABLES)
def test_each_table_holds_the_same_rows_every_way(
    stores: dict[str, Path], rows: list[TraceRow], table: str, way: str
) -> None:
    expected = table_rows(stores["api"], table)
    if table != "trace_request_metadata":  # MLflow writes none for these traces
        assert len(expected) >= len(rows)
    assert table_rows(stores[way], table) == expected


@slow
@pytest.mark.parametrize("way", WAYS)
def test_bulk_traces_read_back_through_the_client(
    stores: dict[str, Path], rows: list[TraceRow], way: str
) -> None:
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{stores[way]}")
    run = client.search_runs(["1"])[0]
    traces = client.search_traces(locations=["1"], run_id=run.info.run_id, max_results=1000)
    assert len(traces) == len(rows)
    by_key = {(t.info.tags["llm_eval.task_id"], t.info.tags["llm_eval.epoch"]): t for t in traces}
    failed = by_key[("failed", "0")]
    assert failed.info.state.value == "ERROR"
    assert failed.info.assessments[0].error.error_code == "timeout"
    costed = by_key[("costed", "0")]
    assert costed.info.assessments[0].feedback.value is True
    tool_row = next(row for row in rows if row.tool_calls)
    tool_trace = by_key[(tool_row.task_id, str(tool_row.epoch))]
    assert {span.span_type for span in tool_trace.data.spans} >= {"CHAT_MODEL", "TOOL"}
    with sqlite3.connect(stores[way]) as connection:
        query = "SELECT total_tokens, total_cost FROM trace_info WHERE request_id = ?"
        totals = connection.execute(query, (costed.info.trace_id,)).fetchone()
    assert totals == (150, pytest.approx(0.00042))


@slow
def test_a_failed_bulk_write_falls_back_to_the_api(
    rows: list[TraceRow], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    from llm_eval.tracking import sql_writes

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("no such column")

    monkeypatch.setattr(sql_writes, "write_traces", broken)
    monkeypatch.setattr(sql_writes, "write_assessments", broken)
    db = write_one_way(rows, tmp_path, "sql_writes")
    assert "bulk trace insert failed" in capsys.readouterr().err
    assert table_rows(db, "trace_info") and len(table_rows(db, "assessments")) == len(rows)


@slow
def test_stores_it_cannot_keep_consistent_use_the_api(monkeypatch: pytest.MonkeyPatch,
                                                        tmp_path: Path) -> None:  # fmt: skip
    from mlflow import MlflowClient

    from llm_eval.tracking.sql_writes import sql_store

    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'm.db'}")
    assert sql_store(client) is not None
    monkeypatch.setenv("MLFLOW_SQL_TRACE_ROLLUPS_ENABLED", "true")
    assert sql_store(client) is None


@pytest.mark.parametrize(("value", "on"), [(None, False), ("true", True), ("1", True),
                                           ("False", False), ("0", False)])  # fmt: skip
def test_rollups_are_read_from_mlflows_switch(
    monkeypatch: pytest.MonkeyPatch, value: str | None, on: bool
) -> None:
    from llm_eval.tracking.sqlite_traces import ROLLUPS_SWITCH, rollups_enabled

    if value is None:
        monkeypatch.delenv(ROLLUPS_SWITCH, raising=False)
    else:
        monkeypatch.setenv(ROLLUPS_SWITCH, value)
    assert rollups_enabled() is on


@slow
def test_an_mlflow_without_the_private_names_gets_the_same_store_through_the_api(
    rows: list[TraceRow], stores: dict[str, Path], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """As if MLflow had moved a private name: `sql_store` says no, the public API writes."""
    from mlflow import MlflowClient
    from mlflow.store.tracking.dbmodels import models

    from llm_eval.tracking.sql_writes import sql_store

    monkeypatch.delattr(models, "SqlEntityAssociation")  # MLflow's store holds its own binding
    assert sql_store(MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'x.db'}")) is None
    db = write_one_way(rows, tmp_path, "sql_writes")  # asks for bulk writes, gets the API
    for table in COMPARED_TABLES:
        assert table_rows(db, table) == table_rows(stores["api"], table), table


def verdict_view(assessment: Any) -> tuple[Any, ...]:
    """What a verdict says, from MLflow's `Feedback` or a `FeedbackRecord` alike."""
    error = assessment.error
    return (
        assessment.assessment_id, assessment.trace_id, assessment.name, assessment.value,
        (error.error_code, error.error_message) if error is not None else None,
        (assessment.source.source_type, assessment.source.source_id), assessment.rationale,
        assessment.metadata, assessment.overrides, assessment.valid, assessment.create_time_ms,
        assessment.last_update_time_ms, assessment.span_id, assessment.run_id,
    )  # fmt: skip


def mlflow_verdicts(db: Path, trace_ids: list[str]) -> dict[str, list[tuple[Any, ...]]]:
    """The valid `correct` assessments of each trace, as MLflow's client reads them."""
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{db}")
    found: dict[str, list[tuple[Any, ...]]] = {}
    for trace_id in trace_ids:
        assessments = client.get_trace(trace_id).info.assessments
        current = [a for a in assessments if a.name == "correct" and a.valid]
        if current:
            found[trace_id] = sorted(verdict_view(a) for a in current)
    return found


def sqlite_verdicts(db: Path, trace_ids: list[str]) -> dict[str, list[tuple[Any, ...]]]:
    from llm_eval.tracking.sqlite_traces import valid_assessments

    connection = sqlite3.connect(db)
    try:
        found = valid_assessments(connection, trace_ids, "correct")
    finally:
        connection.close()
    return {
        trace_id: sorted(verdict_view(r) for r in records) for trace_id, records in found.items()
    }


@slow
@pytest.mark.parametrize("way", ("api", *WAYS))
def test_verdicts_read_back_with_sqlite3_as_mlflows_client_reads_them(
    stores: dict[str, Path], rows: list[TraceRow], way: str
) -> None:
    from llm_eval.tracking.identity import trace_id_of, trace_key

    trace_ids = [trace_id_of(trace_key(row)) for row in rows]
    expected = mlflow_verdicts(stores[way], trace_ids)
    assert len(expected) == len(rows)
    assert sqlite_verdicts(stores[way], trace_ids) == expected


@slow
def test_a_replaced_verdict_is_marked_not_valid_as_mlflow_marks_an_overridden_one(
    rows: list[TraceRow], tmp_path: Path
) -> None:
    """A verdict written with `overrides` (and the old one's id in `invalidate`) reads back
    through MLflow's client as MLflow's own override leaves it; a trace not in the store is
    refused and the whole write rolled back."""
    from mlflow import MlflowClient

    from llm_eval.tracking import sqlite_traces
    from llm_eval.tracking.assessments import verdict_feedback

    db = write_one_way(rows[:2], tmp_path, "sqlite_traces")
    trace_ids = list(mlflow_verdicts(db, _trace_ids(rows[:2])))
    (old,) = sqlite_verdicts(db, trace_ids[:1])[trace_ids[0]]
    new = verdict_feedback(trace_ids[0], rows[0].model_copy(update={"status": "incorrect"}))
    new.overrides = old[0]
    stray = verdict_feedback("tr-" + "f" * 32, rows[1])
    connection = sqlite3.connect(db, timeout=30)
    try:
        with pytest.raises(ValueError, match="not in the store"):
            sqlite_traces.write_assessments(connection, [new, stray], [old[0]])
        sqlite_traces.write_assessments(connection, [new], [old[0]])
    finally:
        connection.close()
    trace = MlflowClient(tracking_uri=f"sqlite:///{db}").get_trace(trace_ids[0])
    by_id = {a.assessment_id: a for a in trace.info.assessments}
    assert len(by_id) == 2 and by_id[old[0]].valid is False
    (current,) = [a for a in by_id.values() if a.valid]
    assert (current.overrides, current.value) == (old[0], rows[0].status != "correct")


def _trace_ids(rows: list[TraceRow]) -> list[str]:
    from llm_eval.tracking.identity import trace_id_of, trace_key

    return [trace_id_of(trace_key(row)) for row in rows]


CHILD = """
import sqlite3, sys
from llm_eval.tracking import mlflow_rows, sqlite_traces
from llm_eval.tracking.assessments import verdict_feedback
from llm_eval.tracking.bulk_traces import row_trace
from tests.support.rows import make_row

db, experiment, run_id = sys.argv[1:4]
row = make_row(task_id="child")
trace = row_trace(row, experiment)
connection = sqlite3.connect(db, timeout=30)
for _ in range(2):  # the second write finds the trace stored and adds nothing
    sqlite_traces.write_traces(connection, experiment, "file:///a", run_id, [trace])
sqlite_traces.write_assessments(connection, [verdict_feedback(trace.trace_id, row)], [])
assert sqlite_traces.stored_trace_ids(connection, [trace.trace_id]) == {trace.trace_id}
assert len(sqlite_traces.valid_assessments(connection, [trace.trace_id], "correct")) == 1
print(sorted(m for m in ("mlflow", "sqlalchemy", "opentelemetry", "pandas") if m in sys.modules))
"""


def test_the_sqlite_path_writes_a_trace_and_a_verdict_without_importing_mlflow(
    tmp_path: Path,
) -> None:
    """In a fresh interpreter: a trace (twice: written once) and its verdict written into a
    store MLflow made, and none of MLflow, SQLAlchemy, OpenTelemetry or pandas imported."""
    from mlflow import MlflowClient

    db = tmp_path / "mlflow.db"
    client = MlflowClient(tracking_uri=f"sqlite:///{db}")
    experiment = client.create_experiment("e", artifact_location="file:///a")
    run_id = client.create_run(experiment).info.run_id
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(db), experiment, run_id],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[]"]
    tables = ("trace_info", "spans", "entity_associations", "assessments")
    with sqlite3.connect(db) as connection:
        counts = [connection.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables]
    assert counts[0] == 1 and counts[1] >= 1 and counts[2:] == [1, 1]
