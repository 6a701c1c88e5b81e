"""Bulk inserts write exactly what MLflow's own API writes, column for column.

The same rows (from real mock runs: tool calls, multi-turn, AIMO3 rounds, provider errors;
plus rows with cost, long Greek text and a simulated clock) are logged as traces and
verdicts twice, into two fresh SQLite stores: once through MLflow's `log_spans`,
`link_traces_to_run` and `log_assessment`, once through `sql_writes`. Every table must hold
the same rows, apart from the ids and clocks MLflow draws itself. An MLflow upgrade that
changes what its store writes fails here.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from llm_eval.runner.trace_io import read_rows
from llm_eval.schemas import CallRecord, TraceRow, Usage
from llm_eval.tracking.sql_writes import DISABLE_SWITCH
from tests.support.rows import make_row
from tests.tracking.test_tracking import llm_eval, make_suite

pytestmark = pytest.mark.slow

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


def write_both_ways(rows: list[TraceRow], directory: Path, use_sql_writes: bool) -> Path:
    from mlflow import MlflowClient

    from llm_eval.tracking.assessments import log_verdicts
    from llm_eval.tracking.bulk_traces import log_rows_as_traces

    db = directory / ("bulk.db" if use_sql_writes else "api.db")
    client = MlflowClient(tracking_uri=f"sqlite:///{db}")
    with api_only(not use_sql_writes):
        experiment = client.create_experiment("e", artifact_location="file:///shared/artifacts")
        tags = {"llm_eval.stage": "run", "llm_eval.model": "m"}
        run = client.create_run(experiment, tags=tags)
        shifts = [1_000_000_000 * index for index in range(len(rows))]
        log_rows_as_traces(client, experiment, run.info.run_id, rows, shift_ns=shifts)
        assert log_verdicts(client, rows, {}).written == len(rows)
    return db


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
def stores(rows: list[TraceRow], tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    directory = tmp_path_factory.mktemp("stores")
    return write_both_ways(rows, directory, False), write_both_ways(rows, directory, True)


def test_every_table_gets_as_many_rows_both_ways(stores: tuple[Path, Path]) -> None:
    api, bulk = stores
    assert row_counts(bulk) == row_counts(api)


@pytest.mark.parametrize("table", COMPARED_TABLES)
def test_each_table_holds_the_same_rows_both_ways(
    stores: tuple[Path, Path], rows: list[TraceRow], table: str
) -> None:
    api, bulk = stores
    expected = table_rows(api, table)
    if table != "trace_request_metadata":  # MLflow writes none for these traces
        assert len(expected) >= len(rows)
    assert table_rows(bulk, table) == expected


def test_bulk_traces_read_back_through_the_client(
    stores: tuple[Path, Path], rows: list[TraceRow]
) -> None:
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{stores[1]}")
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
    with sqlite3.connect(stores[1]) as connection:
        query = "SELECT total_tokens, total_cost FROM trace_info WHERE request_id = ?"
        totals = connection.execute(query, (costed.info.trace_id,)).fetchone()
    assert totals == (150, pytest.approx(0.00042))


def test_a_failed_bulk_write_falls_back_to_the_api(
    rows: list[TraceRow], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    from llm_eval.tracking import sql_writes

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("no such column")

    monkeypatch.setattr(sql_writes, "write_traces", broken)
    monkeypatch.setattr(sql_writes, "write_assessments", broken)
    db = write_both_ways(rows, tmp_path, True)
    assert "bulk trace insert failed" in capsys.readouterr().err
    assert table_rows(db, "trace_info") and len(table_rows(db, "assessments")) == len(rows)


def test_stores_it_cannot_keep_consistent_use_the_api(monkeypatch: pytest.MonkeyPatch,
                                                        tmp_path: Path) -> None:  # fmt: skip
    from mlflow import MlflowClient

    from llm_eval.tracking.sql_writes import sql_store

    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'm.db'}")
    assert sql_store(client) is not None
    monkeypatch.setenv("MLFLOW_SQL_TRACE_ROLLUPS_ENABLED", "true")
    assert sql_store(client) is None


def test_an_mlflow_without_the_private_names_gets_the_same_store_through_the_api(
    rows: list[TraceRow], stores: tuple[Path, Path], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """As if MLflow had moved a private name: `sql_store` says no, the public API writes."""
    from mlflow import MlflowClient

    from llm_eval.tracking.sql_writes import sql_store

    monkeypatch.setitem(sys.modules, "mlflow.tracing.utils.truncation", None)
    assert sql_store(MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'x.db'}")) is None
    db = write_both_ways(rows, tmp_path, True)  # asks for bulk writes, gets the API
    for table in COMPARED_TABLES:
        assert table_rows(db, table) == table_rows(stores[1], table), table
