"""Log a run's rows as MLflow traces while the run is still going, in a helper process.

Writing a trace costs the store work per row; done after the run, that was most of what
tracking added to it. Here `run` starts `LiveTraces` before the first request: each finished
row goes, through a feeder thread and a pipe, to a child process
(`python -m llm_eval.tracking.live`) that creates the model's MLflow run on its first row and
writes traces in batches (taking the store lock per batch), at a lower scheduling priority.
When the run ends the child logs what is left, then the stage itself (metrics, task table,
artifacts, read from the finished trace file) into those same runs, so the `run` command
never imports MLflow. If the child fails, the run is not affected: the command calls
`track_stage`, which logs the traces and the stage itself, as without the child.
"""

from __future__ import annotations

import contextlib
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import IO, TYPE_CHECKING

from llm_eval.redaction import error_line

if TYPE_CHECKING:
    from llm_eval.schemas import TraceRow

BATCH_ROWS = 200
"""Rows per batch the child writes at once."""

LOG_STAGE = "--log-stage--"
"""The parent's last line when the run finished: the child then logs the stage too."""

DONE = "stage logged"
"""The child's last line once it logged the stage."""

BACKLOG_ROWS = 1000
"""Rows per batch at most when the child is behind (fewer transactions to catch up)."""

BATCH_WAIT_S = 2.0
"""Longest a partial batch waits for more rows before the child writes it."""

CLOSE_TIMEOUT_S = 600.0

NICENESS = 10
"""Scheduling priority the child lowers itself by."""


class LiveTraces:
    """The parent side: hand rows to the child without ever blocking the event loop."""

    def __init__(self, config_root: Path, rows_path: Path, stage: str = "run") -> None:
        from llm_eval.tracking.context import ENV_PIPELINE_ID, invocation_id

        env = dict(os.environ)
        # The child must join the same parent MLflow run as this process would.
        pipeline = env.get(ENV_PIPELINE_ID) or invocation_id()
        if pipeline:
            env[ENV_PIPELINE_ID] = pipeline
        command = [sys.executable, "-m", "llm_eval.tracking.live", str(config_root), stage]
        self._process = subprocess.Popen(
            [*command, str(rows_path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
            encoding="utf-8",
        )
        self._rows: queue.SimpleQueue[TraceRow | str | None] = queue.SimpleQueue()
        self._feeder = threading.Thread(target=self._feed, name="live-traces", daemon=True)
        self._feeder.start()

    def add(self, row: TraceRow) -> None:
        """Queue one finished row (cheap: serialised and sent by the feeder thread)."""
        self._rows.put(row)

    def close(self, *, log_stage: bool) -> bool:
        """Send the rest, wait for the child; True if it logged the stage as asked.

        With `log_stage` the trace file must be complete: the child logs it as the stage.
        Without it (an interrupted run) the child only logs the traces of the rows it got.
        """
        if log_stage:
            self._rows.put(LOG_STAGE)
        self._rows.put(None)
        self._feeder.join()
        self._process.stdin = None  # the feeder closed it; communicate() must not flush it
        try:
            out, _ = self._process.communicate(timeout=CLOSE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.communicate()
            return False
        return log_stage and self._process.returncode == 0 and out.strip().endswith(DONE)

    def _feed(self) -> None:
        stdin = self._process.stdin
        assert stdin is not None
        try:
            while (item := self._rows.get()) is not None:
                stdin.write(item if isinstance(item, str) else item.model_dump_json())
                stdin.write("\n")
            stdin.close()
        except (BrokenPipeError, OSError):  # the child died: close() reports the failure
            while self._rows.get() is not None:
                pass


# --------------------------------------------------------------------------- the child


def batches(lines: IO[str]) -> Iterator[list[str]]:
    """Lines of `lines` in batches: BATCH_ROWS, or more (up to BACKLOG_ROWS) while more are
    already waiting, or fewer once BATCH_WAIT_S has passed since the batch's first line."""
    pending: queue.SimpleQueue[str | None] = queue.SimpleQueue()

    def read() -> None:
        for line in lines:
            pending.put(line)
        pending.put(None)

    threading.Thread(target=read, daemon=True).start()
    batch: list[str] = []
    deadline = time.monotonic() + BATCH_WAIT_S
    while True:
        try:
            line = pending.get(timeout=max(deadline - time.monotonic(), 0.01))
        except queue.Empty:
            line = ""
        if line is None:
            if batch:
                yield batch
            return
        if line.strip():
            batch.append(line)
        full = len(batch) >= BACKLOG_ROWS or (len(batch) >= BATCH_ROWS and pending.empty())
        if full or (batch and time.monotonic() >= deadline):
            yield batch
            batch = []
            deadline = time.monotonic() + BATCH_WAIT_S
        elif not batch:
            deadline = time.monotonic() + BATCH_WAIT_S


def follow(config_root: Path, stage: str, lines: IO[str]) -> tuple[dict[str, str], bool]:
    """Log every row read from `lines` as a trace of its model's run.

    Returns {model: run id} and whether the parent asked for the stage to be logged.
    """
    from llm_eval.schemas import TraceRow
    from llm_eval.tracking import store
    from llm_eval.tracking.context import build_context, read_params
    from llm_eval.tracking.stages import log_traces, open_model_run, quiet_mlflow

    os.environ.setdefault("MLFLOW_ENABLE_ASYNC_TRACE_LOGGING", "false")
    quiet_mlflow()
    ctx = build_context(stage, config_root, read_params(config_root) or {})
    runs: dict[str, str] = {}
    log_stage = False
    with store.global_tracking_uri(ctx.tracking_uri):
        client = store.client_for(ctx)
        exp_id = store.experiment_id(client, ctx)
        import pandas  # noqa: F401  (for the stage's task table: imported now, not after the run)

        for batch in batches(lines):
            rows = []
            for line in batch:
                if line.strip() == LOG_STAGE:
                    log_stage = True
                else:
                    rows.append(TraceRow.model_validate_json(line))
            with store.store_lock(store.lock_directory(ctx)):
                by_model: dict[str, list[TraceRow]] = {}
                for row in rows:
                    by_model.setdefault(row.model, []).append(row)
                for model, group in by_model.items():
                    if model not in runs:  # the parent run is looked up once per model
                        parent = store.parent_run_id(client, exp_id, ctx)
                        runs[model] = open_model_run(client, ctx, exp_id, parent, model, group[0])
                    log_traces(client, exp_id, runs[model], group)
        if not log_stage:  # the run was interrupted: its MLflow runs end as killed
            for run_id in runs.values():
                store.with_retry(partial(client.set_terminated, run_id, "KILLED"))
    return runs, log_stage


def main(argv: list[str]) -> int:
    from llm_eval.tracking import track_stage

    config_root, stage, rows_path = Path(argv[0]), argv[1], Path(argv[2])
    # Background work: where the run keeps every core busy, the run goes first and the
    # traces catch up after it, rather than both slowing down.
    with contextlib.suppress(OSError):
        os.nice(NICENESS)
    try:
        runs, log_stage = follow(config_root, stage, sys.stdin)
    except Exception as exc:  # the parent falls back to logging the traces itself
        message = error_line(exc)
        print(f"warning: live trace logging failed: {message}", file=sys.stderr)
        for _ in sys.stdin:  # drain, so the parent's feeder never blocks on a full pipe
            pass
        return 1
    if log_stage:
        # The run finished and its trace file is complete: the stage goes into the same runs.
        # `track_stage` never raises; it reports its own failure, which is not retried.
        track_stage(stage, config_root=config_root, rows_paths=[rows_path], live_runs=runs)
        print(DONE)
    return 0


if __name__ == "__main__":
    from llm_eval.tracking import exit_process

    exit_process(main(sys.argv[1:]))
