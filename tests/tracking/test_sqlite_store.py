"""The standard-library writer of the local store writes what MLflow's client writes.

The same runs (tags, params, metrics with repeats, NaN and infinity, a table, an artifact, the
run's end) are logged into two copies of one fresh store: once through `MlflowClient`, once
through `SqliteRecordClient`. Every column of `runs`, `tags`, `params`, `metrics` and
`latest_metrics` must come out the same (run ids mapped onto each other), the artifacts the
same files, and the table the same when MLflow reads it back. An MLflow upgrade that changes
its schema fails `test_known_schema_is_the_installed_mlflows` (the writer then steps aside).
"""

from __future__ import annotations

import math
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from llm_eval.tracking.sqlite_store import (
    DISABLE_SWITCH,
    KNOWN_SCHEMA,
    MetricValue,
    SqliteRecordClient,
    open_client,
)

EXPERIMENT = "llm-eval"


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store MLflow created, with the experiment (artifacts in a local folder)."""
    from mlflow import MlflowClient

    folder = tmp_path_factory.mktemp("template")
    client = MlflowClient(tracking_uri=f"sqlite:///{folder / 'mlflow.db'}")
    client.create_experiment(EXPERIMENT, artifact_location=(folder / "artifacts").as_uri())
    return folder


def copy_store(template: Path, target: Path) -> str:
    """A copy of the template store whose artifacts live under `target`; its URI."""
    shutil.copytree(template, target)
    database = sqlite3.connect(target / "mlflow.db")
    with database:
        database.execute(
            "UPDATE experiments SET artifact_location = ? WHERE name = ?",
            ((target / "artifacts").as_uri(), EXPERIMENT),
        )
    database.close()
    return f"sqlite:///{target / 'mlflow.db'}"


def test_known_schema_is_the_installed_mlflows(template: Path) -> None:
    database = sqlite3.connect(template / "mlflow.db")
    (revision,) = database.execute("SELECT version_num FROM alembic_version").fetchone()
    assert revision == KNOWN_SCHEMA


TABLE = {
    "task_id": ["a", "b", "γ"],
    "epoch": [0, 1, 2],
    "latency_s": [0.5, 1.25, None],
    "extracted": ["42", None, "Αθήνα"],
}


def log_both_ways(template: Path, tmp_path: Path, source: Path) -> tuple[Path, Path, list[str]]:
    """The same calls through MLflow and through the writer; the two folders and the names
    the runs were given."""
    from mlflow import MlflowClient
    from mlflow.entities import Metric, Param

    metrics = [
        MetricValue("overall/accuracy", 0.75, 1_000, 0),
        MetricValue("overall/accuracy", 0.5, 2_000, 0),  # newer: the latest
        MetricValue("overall/accuracy", 0.9, 1_500, 0),  # older: kept, not the latest
        MetricValue("nan_metric", math.nan, 1_000, 0),
        MetricValue("big", math.inf, 1_000, 0),
        MetricValue("stepped", 1.0, 500, 3),
        MetricValue("stepped", 2.0, 900, 1),  # an earlier step: not the latest
    ]
    tags = {"llm_eval.stage": "run", "llm_eval.model": "m", "mlflow.parentRunId": "p"}
    names = ["run:m @ abc", "pipeline abc"]

    mlflow_uri = copy_store(template, tmp_path / "mlflow")
    client = MlflowClient(tracking_uri=mlflow_uri)
    exp = client.get_experiment_by_name(EXPERIMENT)
    assert exp is not None
    for name in names:
        run_id = client.create_run(exp.experiment_id, 1_000, dict(tags), name).info.run_id
        client.log_batch(run_id, params=[Param("model.name", "m"), Param("runner.seed", "7")])
        client.log_batch(run_id, metrics=[Metric(*metric) for metric in metrics])
        client.set_tag(run_id, "extra", "1")
        client.log_table(run_id, TABLE, "tasks/m.json")
        client.log_artifact(run_id, str(source), "traces")
        client.set_terminated(run_id, "KILLED", 9_000)

    lite_uri = copy_store(template, tmp_path / "lite")
    lite = open_client(lite_uri, EXPERIMENT)
    assert lite is not None
    exp_id = lite.get_experiment_by_name(EXPERIMENT).experiment_id  # type: ignore[union-attr]
    for name in names:
        run_id = lite.create_run(exp_id, 1_000, dict(tags), name)
        lite.log_params(run_id, {"model.name": "m", "runner.seed": "7"})
        lite.log_metrics(run_id, metrics)
        lite.set_tag(run_id, "extra", "1")
        lite.log_table(run_id, TABLE, "tasks/m.json")
        lite.log_artifact(run_id, str(source), "traces")
        lite.set_terminated(run_id, "KILLED", 9_000)
    lite.close()
    return tmp_path / "mlflow", tmp_path / "lite", names


def table_rows(folder: Path, table: str) -> list[tuple[Any, ...]]:
    """A table's rows with run ids replaced by run names (ids are random), sorted."""
    database = sqlite3.connect(folder / "mlflow.db")
    names = dict(database.execute("SELECT run_uuid, name FROM runs").fetchall())
    columns = [row[1] for row in database.execute(f"PRAGMA table_info({table})")]
    rows = []
    for row in database.execute(f"SELECT * FROM {table}"):
        values = dict(zip(columns, row, strict=True))
        if "run_uuid" in values:
            values["run_uuid"] = names[values["run_uuid"]]
        if "artifact_uri" in values:
            values["artifact_uri"] = values["artifact_uri"].split(str(folder), 1)[1]
            for run_id, name in names.items():
                values["artifact_uri"] = values["artifact_uri"].replace(run_id, name)
        rows.append(tuple(sorted((k, repr(v)) for k, v in values.items())))
    database.close()
    return sorted(rows)


@pytest.mark.parametrize("table", ["runs", "tags", "params", "metrics", "latest_metrics"])
def test_every_column_as_mlflow_writes_it(template: Path, tmp_path: Path, table: str) -> None:
    source = tmp_path / "rows.jsonl"
    source.write_text('{"a": 1}\n')
    mlflow_dir, lite_dir, _ = log_both_ways(template, tmp_path, source)
    expected = table_rows(mlflow_dir, table)
    assert expected, f"MLflow wrote no {table} rows: the comparison would prove nothing"
    assert table_rows(lite_dir, table) == expected


def test_artifacts_and_table_read_back_through_mlflow(template: Path, tmp_path: Path) -> None:
    import mlflow
    from mlflow import MlflowClient
    from pandas.testing import assert_frame_equal

    source = tmp_path / "rows.jsonl"
    source.write_text('{"a": 1}\n')
    mlflow_dir, lite_dir, _ = log_both_ways(template, tmp_path, source)
    tables = []
    for folder in (mlflow_dir, lite_dir):
        client = MlflowClient(tracking_uri=f"sqlite:///{folder / 'mlflow.db'}")
        exp = client.get_experiment_by_name(EXPERIMENT)
        assert exp is not None
        runs = client.search_runs([exp.experiment_id])
        assert len(runs) == 2
        for run in runs:
            listed = sorted(f.path for f in client.list_artifacts(run.info.run_id, "traces"))
            assert listed == ["traces/rows.jsonl"]
            local = client.download_artifacts(run.info.run_id, "traces/rows.jsonl", str(tmp_path))
            assert Path(local).read_text() == '{"a": 1}\n'
        mlflow.set_tracking_uri(client.tracking_uri)  # `load_table` searches the global one
        try:
            loaded = client.load_table(exp.experiment_id, "tasks/m.json")
        finally:
            mlflow.set_tracking_uri(None)  # type: ignore[arg-type]
        tables.append(loaded.sort_values(["task_id"]).reset_index(drop=True))
    assert len(tables[0]) == 6  # three rows in each of the two runs
    assert_frame_equal(tables[1], tables[0], check_dtype=False)


def stepped_aside(template: Path, tmp_path: Path, change: Callable[[Path], None]) -> bool:
    uri = copy_store(template, tmp_path / "store")
    change(tmp_path / "store")
    client = open_client(uri, EXPERIMENT)
    if client is not None:
        client.close()
    return client is None


def _sql(statement: str) -> Callable[[Path], None]:
    def change(folder: Path) -> None:
        database = sqlite3.connect(folder / "mlflow.db")
        with database:
            database.execute(statement)
        database.close()

    return change


def test_writes_only_where_it_writes_what_mlflow_would(
    template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert not stepped_aside(template, tmp_path / "a", lambda _: None)
    assert stepped_aside(
        template, tmp_path / "b", _sql("UPDATE alembic_version SET version_num = 'x'")
    )
    assert stepped_aside(
        template, tmp_path / "c", _sql("DELETE FROM experiments WHERE name = 'llm-eval'")
    )
    assert stepped_aside(
        template, tmp_path / "d", _sql("UPDATE experiments SET lifecycle_stage = 'deleted'")
    )
    assert stepped_aside(
        template, tmp_path / "e", _sql("UPDATE experiments SET artifact_location = 's3://b/x'")
    )
    assert open_client(f"sqlite:///{tmp_path / 'missing.db'}", EXPERIMENT) is None
    assert open_client("http://127.0.0.1:5000", EXPERIMENT) is None
    monkeypatch.setenv("MLFLOW_SQL_TRACE_ROLLUPS_ENABLED", "true")
    assert stepped_aside(template, tmp_path / "f", lambda _: None)
    monkeypatch.delenv("MLFLOW_SQL_TRACE_ROLLUPS_ENABLED")
    monkeypatch.setenv(DISABLE_SWITCH, "0")
    assert stepped_aside(template, tmp_path / "g", lambda _: None)


def test_a_param_cannot_change(template: Path, tmp_path: Path) -> None:
    client = open_client(copy_store(template, tmp_path / "s"), EXPERIMENT)
    assert isinstance(client, SqliteRecordClient)
    exp = client.get_experiment_by_name(EXPERIMENT)
    assert exp is not None
    run_id = client.create_run(exp.experiment_id, 1, {}, "r")
    client.log_params(run_id, {"k": "1"})
    client.log_params(run_id, {"k": "1"})  # the same value again is accepted
    with pytest.raises(ValueError, match="param 'k'"):
        client.log_params(run_id, {"k": "2"})
    client.close()


def test_the_collector_rests_while_the_local_store_is_written(
    template: Path, tmp_path: Path
) -> None:
    """The cycle collector is off inside the local writer's block and as it was after,
    an error included; MLflow's path (a missing store here) keeps it on."""
    import gc
    from types import SimpleNamespace

    from llm_eval.tracking.stages import _store_client

    uri = copy_store(template, tmp_path / "store")
    context: Any = SimpleNamespace(tracking_uri=uri, experiment=EXPERIMENT)
    assert gc.isenabled()
    with _store_client(context) as client:
        assert isinstance(client, SqliteRecordClient)
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), _store_client(context):
        raise RuntimeError("a failed write")
    assert gc.isenabled()
    gc.disable()
    try:
        with _store_client(context):
            pass
        assert not gc.isenabled()  # left as the caller had it
    finally:
        gc.enable()
    context = SimpleNamespace(tracking_uri=f"sqlite:///{tmp_path / 'new.db'}",
                              experiment=EXPERIMENT)  # fmt: skip
    with _store_client(context) as client:
        assert not isinstance(client, SqliteRecordClient)
        assert gc.isenabled()
