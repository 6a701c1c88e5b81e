"""The MLflow store: a cross-process lock, retries on a locked SQLite file, the experiment
and the parent run of a pipeline execution. MLflow is imported inside functions only.

Under `dvc queue start -j 2` two experiments write one SQLite file at once. Each stage takes
an exclusive `flock` on `mlruns/.tracking.lock` while it logs (logging takes a second or two;
the model calls themselves run in parallel), SQLite's busy timeout covers readers such as
`mlflow ui`, and every write is retried with backoff if the database is still locked.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import random
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from llm_eval.tracking.context import StageContext, pipeline_params
from llm_eval.tracking.sqlite_store import MetricValue, SqliteRecordClient

if TYPE_CHECKING:
    from typing import TypeAlias

    from mlflow import MlflowClient

    RecordClient: TypeAlias = MlflowClient | SqliteRecordClient

T = TypeVar("T")

LOCK_FILE = ".tracking.lock"
LOCK_TIMEOUT_S = 300.0
RETRY_ATTEMPTS = 8
PARENT_STAGE = "pipeline"
_LOCKED_MESSAGES = ("database is locked", "database is busy", "database table is locked")


def is_locked_error(exc: BaseException) -> bool:
    """Whether an exception (or its cause) is SQLite saying another writer holds the file."""
    seen: BaseException | None = exc
    for _ in range(5):
        if seen is None:
            return False
        if any(message in str(seen).lower() for message in _LOCKED_MESSAGES):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def with_retry(action: Callable[[], T], attempts: int = RETRY_ATTEMPTS, base_s: float = 0.2) -> T:
    """Run `action`; on a locked database wait (exponential backoff, jitter) and try again.

    The first wait of the process says so in one line (a program such as a `sqlite3` shell
    or a long `mlflow ui` query holds the file); a lock that outlasts the retries raises.
    """
    for attempt in range(1, attempts + 1):
        try:
            return action()
        except Exception as exc:
            if attempt == attempts or not is_locked_error(exc):
                raise
            _say_locked()
            time.sleep(min(base_s * 2 ** (attempt - 1), 5.0) * (0.5 + random.random()))
    raise AssertionError("unreachable")


_said_locked = False


def _say_locked() -> None:
    global _said_locked
    if not _said_locked:
        _said_locked = True
        print("MLflow store is locked by another program; waiting for it and retrying",
              file=sys.stderr)  # fmt: skip


def lock_directory(ctx: StageContext) -> Path | None:
    """Where the cross-process lock lives: next to a local SQLite file; None for a server."""
    uri = ctx.tracking_uri
    if not uri.startswith("sqlite:///"):
        return None
    path = Path(uri.removeprefix("sqlite:///"))
    return path.parent if path.is_absolute() else Path.cwd() / path.parent


@contextlib.contextmanager
def store_lock(directory: Path | None, timeout_s: float = LOCK_TIMEOUT_S) -> Iterator[bool]:
    """Hold an exclusive lock on the store while logging; yields False if none was taken.

    Only for a local SQLite store: a tracking server needs no lock. On timeout the stage logs
    anyway (the retries still protect it) rather than wait forever.
    """
    if directory is None:
        yield False
        return
    directory.mkdir(parents=True, exist_ok=True)
    with (directory / LOCK_FILE).open("a+") as handle:
        acquired = _acquire(handle.fileno(), timeout_s)
        try:
            yield acquired
        finally:
            if acquired:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _acquire(fd: int, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.1)


@contextlib.contextmanager
def global_tracking_uri(uri: str) -> Iterator[None]:
    """Point MLflow's process-wide URI (tracing exports there) at `uri`, then restore it."""
    import mlflow

    previous_env = os.environ.get("MLFLOW_TRACKING_URI")
    mlflow.set_tracking_uri(uri)
    try:
        yield
    finally:
        mlflow.set_tracking_uri(None)  # type: ignore[arg-type]  # unsets the env var too
        if previous_env is not None:
            os.environ["MLFLOW_TRACKING_URI"] = previous_env


def client_for(ctx: StageContext) -> MlflowClient:
    """MLflow's client on the stage's store (creating the SQLite schema the first time)."""
    from mlflow import MlflowClient

    return with_retry(lambda: _ready_client(MlflowClient(tracking_uri=ctx.tracking_uri)))


def _ready_client(client: MlflowClient) -> MlflowClient:
    client.search_experiments(max_results=1)  # opens the store: creates or migrates the schema
    use_write_ahead_log(client.tracking_uri)
    return client


def use_write_ahead_log(uri: str) -> None:
    """Switch a local SQLite store to write-ahead logging (it stays so: the mode is stored in
    the file). A commit then appends to the log instead of rewriting pages under a rollback
    journal, and readers such as `mlflow ui` no longer block a stage that writes."""
    import sqlite3

    if not uri.startswith("sqlite:///"):
        return
    database = sqlite3.connect(uri.removeprefix("sqlite:///"), timeout=30)
    try:
        database.execute("PRAGMA journal_mode=WAL")
    finally:
        database.close()


def experiment_id(client: RecordClient, ctx: StageContext) -> str:
    """The configured experiment's id, created with an absolute artifact location if new."""
    if isinstance(client, SqliteRecordClient):
        found = client.get_experiment_by_name(ctx.experiment)
        assert found is not None  # `open_client` checked it exists and is active
        return found.experiment_id
    mlflow_client = client
    existing = with_retry(lambda: mlflow_client.get_experiment_by_name(ctx.experiment))
    if existing is not None:
        if existing.lifecycle_stage == "deleted":
            with_retry(lambda: mlflow_client.restore_experiment(existing.experiment_id))
        return str(existing.experiment_id)
    try:
        return with_retry(
            lambda: mlflow_client.create_experiment(
                ctx.experiment, artifact_location=ctx.artifact_location
            )
        )
    except Exception:
        # Another process (a second clone on a shared server) created it in between.
        created = with_retry(lambda: mlflow_client.get_experiment_by_name(ctx.experiment))
        if created is None:
            raise
        return str(created.experiment_id)


def parent_run_id(client: RecordClient, exp_id: str, ctx: StageContext) -> str:
    """Find the parent run of this pipeline execution by its key, or create it."""
    key = {"llm_eval.pipeline_key": ctx.pipeline_key, "llm_eval.stage": PARENT_STAGE}
    if isinstance(client, SqliteRecordClient):
        lite = client
        found_id = with_retry(lambda: lite.find_run(exp_id, key))
        if found_id is not None:
            return found_id
        return _create_parent(client, exp_id, ctx)
    mlflow_client = client
    filter_string = " and ".join(f"tags.`{k}` = '{v}'" for k, v in key.items())
    found = with_retry(
        lambda: mlflow_client.search_runs([exp_id], filter_string=filter_string, max_results=1)
    )
    if found:
        return str(found[0].info.run_id)
    return _create_parent(client, exp_id, ctx)


def _create_parent(client: RecordClient, exp_id: str, ctx: StageContext) -> str:
    name = f"pipeline {ctx.label()}"
    tags = {**ctx.base_tags(), "llm_eval.stage": PARENT_STAGE, "mlflow.runName": name}
    run_id = create_run(client, exp_id, ctx.started_ms, tags, name)
    log_batch(client, run_id, params=pipeline_params(ctx.params))
    return run_id


def create_run(
    client: RecordClient, exp_id: str, start_ms: int | None, tags: dict[str, str], name: str
) -> str:
    """A new RUNNING run; returns its id."""
    if isinstance(client, SqliteRecordClient):
        lite = client
        return with_retry(lambda: lite.create_run(exp_id, start_ms, tags, name))
    mlflow_client = client
    run = with_retry(
        lambda: mlflow_client.create_run(exp_id, start_time=start_ms, tags=tags, run_name=name)
    )
    return str(run.info.run_id)


def log_batch(
    client: RecordClient,
    run_id: str,
    *,
    metrics: Sequence[MetricValue] = (),
    params: Mapping[str, str] | None = None,
) -> None:
    """Log params and metrics, within MLflow's limits (100 params, 1000 metrics per call),
    with retries."""
    items = list((params or {}).items())
    if isinstance(client, SqliteRecordClient):
        lite = client
        for start in range(0, len(items), 100):
            with_retry(partial(lite.log_params, run_id, dict(items[start : start + 100])))
        for start in range(0, len(metrics), 1000):
            with_retry(partial(lite.log_metrics, run_id, metrics[start : start + 1000]))
        return
    from mlflow.entities import Metric, Param

    for start in range(0, len(items), 100):
        chunk = [Param(key, value) for key, value in items[start : start + 100]]
        with_retry(partial(client.log_batch, run_id, params=chunk))
    for start in range(0, len(metrics), 1000):
        entities = [Metric(*metric) for metric in metrics[start : start + 1000]]
        with_retry(partial(client.log_batch, run_id, metrics=entities))


def touch_parent(client: RecordClient, parent_id: str, end_ms: int | None = None) -> None:
    """Mark the parent finished, ending when this stage's work ended (`end_ms`; None: now):
    each stage that joins it moves its end time. It started when its first stage did."""
    with_retry(lambda: client.set_terminated(parent_id, "FINISHED", end_ms))
