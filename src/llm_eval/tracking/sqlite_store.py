"""MLflow's local SQLite store, written with the standard library.

Importing MLflow costs about 2.2 s of CPU, more than all the other work of logging a stage
(and more than the run's own CPU would allow tracking to add). On the default store, a
SQLite file MLflow created, every write a stage makes is a handful of plain INSERTs and
UPDATEs, so they are made here with `sqlite3`: runs, their tags, params and metrics
(`latest_metrics` kept as MLflow keeps it), the run's end, artifacts copied into the run's
local artifact folder and tables written as MLflow's `log_table` writes them. Traces and
verdicts go through `sqlite_traces` on the same connection.

This path is taken only where it writes what MLflow would (`open_client` says None
otherwise, and MLflow's client is used): a SQLite file that exists, whose schema is the one
the installed MLflow creates (`KNOWN_SCHEMA`, checked against MLflow by
`tests/tracking/test_sqlite_store.py`), an experiment that exists and is active, a local
artifact location, and MLflow's SQL trace rollups off. The same test writes the same stage
both ways and compares every column of every table.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import sqlite3
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import unquote, urlparse

KNOWN_SCHEMA = "dc11669786a5"
"""The alembic revision of the schema the installed MLflow (3.17) creates and writes."""

DISABLE_SWITCH = "LLM_EVAL_MLFLOW_SQLITE"
"""Set to 0 to write every stage through MLflow's client instead."""

WORKSPACE = "default"
"""The workspace MLflow files experiments under when none is configured."""

_INF = 1.7976931348623157e308


class MetricValue(NamedTuple):
    """One metric to log (MLflow's `Metric` without MLflow)."""

    key: str
    value: float
    timestamp: int
    step: int = 0


@dataclass(frozen=True)
class Experiment:
    experiment_id: str
    name: str
    artifact_location: str
    lifecycle_stage: str


class SqliteRecordClient:
    """The writes a stage makes, on one SQLite connection (see the module's docstring)."""

    def __init__(self, tracking_uri: str, connection: sqlite3.Connection) -> None:
        self.tracking_uri = tracking_uri
        self.connection = connection

    def close(self) -> None:
        self.connection.close()

    # ----------------------------------------------------------------- experiments

    def get_experiment_by_name(self, name: str) -> Experiment | None:
        found = self.connection.execute(
            "SELECT experiment_id, name, artifact_location, lifecycle_stage FROM experiments"
            " WHERE name = ? AND workspace = ?",
            (name, WORKSPACE),
        ).fetchone()
        return None if found is None else Experiment(str(found[0]), found[1], found[2], found[3])

    def get_experiment(self, experiment_id: str) -> Experiment:
        found = self.connection.execute(
            "SELECT experiment_id, name, artifact_location, lifecycle_stage FROM experiments"
            " WHERE experiment_id = ?",
            (int(experiment_id),),
        ).fetchone()
        if found is None:
            raise LookupError(f"no experiment with id {experiment_id} in {self.tracking_uri}")
        return Experiment(str(found[0]), found[1], found[2], found[3])

    # ----------------------------------------------------------------- runs

    def find_run(self, experiment_id: str, tags: Mapping[str, str]) -> str | None:
        """The newest active run of the experiment carrying every tag in `tags` (as
        `search_runs` with `tags.k = 'v' and ...`, max_results=1, would find)."""
        query = "SELECT run_uuid FROM runs WHERE experiment_id = ? AND lifecycle_stage = 'active'"
        values: list[Any] = [int(experiment_id)]
        for key, value in tags.items():
            query += " AND run_uuid IN (SELECT run_uuid FROM tags WHERE key = ? AND value = ?)"
            values += [key, value]
        query += " ORDER BY start_time DESC, run_uuid LIMIT 1"
        found = self.connection.execute(query, values).fetchone()
        return None if found is None else str(found[0])

    def create_run(
        self, experiment_id: str, start_time: int | None, tags: Mapping[str, str], run_name: str
    ) -> str:
        """A RUNNING run, as `MlflowClient.create_run` makes it; returns its id."""
        experiment = self.get_experiment(experiment_id)
        if experiment.lifecycle_stage != "active":
            raise ValueError(f"experiment {experiment.name!r} is deleted")
        run_id = uuid.uuid4().hex
        all_tags = dict(tags)
        all_tags.setdefault("mlflow.runName", run_name)
        with self.connection:
            self.connection.execute(
                "INSERT INTO runs (run_uuid, name, source_type, source_name, entry_point_name,"
                " user_id, status, start_time, end_time, source_version, lifecycle_stage,"
                " artifact_uri, experiment_id, deleted_time)"
                " VALUES (?, ?, 'UNKNOWN', '', '', ?, 'RUNNING', ?, NULL, '', 'active', ?, ?,"
                " NULL)",
                (
                    run_id,
                    run_name,
                    all_tags.get("mlflow.user", "unknown"),
                    start_time if start_time is not None else _now_ms(),
                    _join_uri(experiment.artifact_location, run_id, "artifacts"),
                    int(experiment_id),
                ),
            )
            self.connection.executemany(
                "INSERT INTO tags (key, value, run_uuid) VALUES (?, ?, ?)",
                [(key, value, run_id) for key, value in all_tags.items()],
            )
        return run_id

    def log_params(self, run_id: str, params: Mapping[str, str]) -> None:
        """Params once: the same value again is accepted, another value is an error (as
        MLflow's)."""
        with self.connection:
            for key, value in params.items():
                stored = self.connection.execute(
                    "SELECT value FROM params WHERE key = ? AND run_uuid = ?", (key, run_id)
                ).fetchone()
                if stored is None:
                    self.connection.execute(
                        "INSERT INTO params (key, value, run_uuid) VALUES (?, ?, ?)",
                        (key, str(value), run_id),
                    )
                elif stored[0] != str(value):
                    raise ValueError(
                        f"param {key!r} of run {run_id} is already {stored[0]!r}, not {value!r}"
                    )

    def log_metrics(self, run_id: str, metrics: Sequence[MetricValue]) -> None:
        """Append the metrics; `latest_metrics` keeps, per key, the one with the largest
        (step, timestamp, value), as MLflow's store does."""
        with self.connection:
            for metric in dict.fromkeys(metrics):
                is_nan, value = _sanitized(metric.value)
                self.connection.execute(
                    "INSERT OR IGNORE INTO metrics (key, value, timestamp, run_uuid, step, is_nan)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    (metric.key, value, metric.timestamp, run_id, metric.step, is_nan),
                )
                latest = self.connection.execute(
                    "SELECT step, timestamp, value FROM latest_metrics"
                    " WHERE key = ? AND run_uuid = ?",
                    (metric.key, run_id),
                ).fetchone()
                new = (metric.step, metric.timestamp, value)
                if latest is None:
                    self.connection.execute(
                        "INSERT INTO latest_metrics (key, value, timestamp, step, is_nan,"
                        " run_uuid) VALUES (?, ?, ?, ?, ?, ?)",
                        (metric.key, value, metric.timestamp, metric.step, is_nan, run_id),
                    )
                elif new > tuple(latest):
                    self.connection.execute(
                        "UPDATE latest_metrics SET value = ?, timestamp = ?, step = ?, is_nan = ?"
                        " WHERE key = ? AND run_uuid = ?",
                        (value, metric.timestamp, metric.step, is_nan, metric.key, run_id),
                    )

    def set_tag(self, run_id: str, key: str, value: str) -> None:
        with self.connection:
            self.connection.execute(
                "INSERT INTO tags (key, value, run_uuid) VALUES (?, ?, ?)"
                " ON CONFLICT (key, run_uuid) DO UPDATE SET value = excluded.value",
                (key, value, run_id),
            )

    def set_terminated(
        self, run_id: str, status: str = "FINISHED", end_time: int | None = None
    ) -> None:
        with self.connection:
            self.connection.execute(
                "UPDATE runs SET status = ?, end_time = ? WHERE run_uuid = ?",
                (status, end_time if end_time is not None else _now_ms(), run_id),
            )

    # ----------------------------------------------------------------- artifacts

    def log_artifact(self, run_id: str, local_path: str, artifact_path: str | None = None) -> None:
        """Copy a file into the run's artifact folder (`artifact_path` below it)."""
        folder = self._artifact_dir(run_id)
        if artifact_path:
            folder = folder / artifact_path
        folder.mkdir(parents=True, exist_ok=True)
        destination = folder / Path(local_path).name
        temporary = destination.with_name(f".{destination.name}.{uuid.uuid4().hex}.tmp")
        shutil.copyfile(local_path, temporary)
        shutil.copystat(local_path, temporary)
        os.replace(temporary, destination)

    def log_table(self, run_id: str, data: Mapping[str, Sequence[Any]], artifact_file: str) -> None:
        """A table of columns as `MlflowClient.log_table` writes a new one: JSON in pandas'
        `split` orientation, and the run's `mlflow.loggedArtifacts` tag naming it."""
        if not artifact_file.endswith(".json"):
            raise ValueError(f"table {artifact_file!r}: only .json tables are written here")
        columns = list(data)
        rows = [list(values) for values in zip(*(data[name] for name in columns), strict=True)]
        target = self._artifact_dir(run_id) / artifact_file
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps({"columns": columns, "data": rows}, default=str))
        stored = self.connection.execute(
            "SELECT value FROM tags WHERE key = 'mlflow.loggedArtifacts' AND run_uuid = ?",
            (run_id,),
        ).fetchone()
        logged = json.loads(stored[0]) if stored else []
        entry = {"path": artifact_file, "type": "table"}
        if entry not in logged:
            self.set_tag(run_id, "mlflow.loggedArtifacts", json.dumps(logged + [entry]))

    def _artifact_dir(self, run_id: str) -> Path:
        found = self.connection.execute(
            "SELECT artifact_uri FROM runs WHERE run_uuid = ?", (run_id,)
        ).fetchone()
        if found is None:
            raise LookupError(f"no run {run_id} in {self.tracking_uri}")
        path = local_path(str(found[0]))
        if path is None:
            raise ValueError(f"run {run_id}'s artifacts are not on this machine: {found[0]}")
        return path


def open_client(tracking_uri: str, experiment: str) -> SqliteRecordClient | None:
    """A client writing the store with `sqlite3`, or None where MLflow's client must write
    it (see the module's docstring for when)."""
    if os.environ.get(DISABLE_SWITCH, "1") == "0" or not tracking_uri.startswith("sqlite:///"):
        return None
    from llm_eval.tracking.sqlite_traces import rollups_enabled

    if rollups_enabled():
        return None  # MLflow's rollup tables need rows only its own writes add
    path = Path(tracking_uri.removeprefix("sqlite:///"))
    if not path.is_file():
        return None  # MLflow creates the schema
    connection = sqlite3.connect(path, timeout=30)
    # MLflow's trace tables carry a dozen indexes: a write of a few thousand traces dirties
    # thousands of their pages. With SQLite's default 2 MiB cache they spill and are written
    # and read back again and again; up to 64 MiB (held only as used) writes each once.
    connection.execute("PRAGMA cache_size = -65536")
    try:
        client = SqliteRecordClient(tracking_uri, connection)
        if not _usable(client, experiment):
            connection.close()
            return None
    except sqlite3.Error:
        connection.close()
        return None
    return client


def _usable(client: SqliteRecordClient, experiment: str) -> bool:
    revision = client.connection.execute("SELECT version_num FROM alembic_version").fetchone()
    if revision is None or revision[0] != KNOWN_SCHEMA:
        return False  # MLflow migrates an older schema; a newer one is not ours to write
    found = client.get_experiment_by_name(experiment)
    return (
        found is not None
        and found.lifecycle_stage == "active"
        and local_path(found.artifact_location) is not None
    )


def local_path(uri: str) -> Path | None:
    """The folder a local artifact location names (`file://` URI or absolute path)."""
    if uri.startswith("file:"):
        parsed = urlparse(uri)
        if parsed.netloc not in ("", "localhost") or parsed.query or parsed.fragment:
            return None
        return Path(unquote(parsed.path))
    if uri.startswith("/"):
        return Path(uri)
    return None


def _join_uri(base: str, *parts: str) -> str:
    """MLflow's `append_to_uri_path` for the locations `local_path` accepts."""
    return "/".join([base.rstrip("/"), *parts])


def _sanitized(value: float) -> tuple[bool, float]:
    """NaN stored as 0 with `is_nan`, infinities as the largest floats (as MLflow does)."""
    if math.isnan(value):
        return True, 0.0
    if math.isinf(value):
        return False, _INF if value > 0 else -_INF
    return False, value


def _now_ms() -> int:
    return time.time_ns() // 1_000_000
