"""Row times and ids: the wall clock for real runs, a clock of its own for simulated ones."""

from __future__ import annotations

import hashlib
import json
import secrets
from datetime import UTC, datetime, timedelta
from typing import Any

from llm_eval.schemas import RowKey, TraceRow


def planned_counts(keys: list[RowKey]) -> dict[str, dict[str, int]]:
    """Rows per model and benchmark among `keys`."""
    counts: dict[str, dict[str, int]] = {}
    for model, benchmark, _task, _epoch in keys:
        per_model = counts.setdefault(model, {})
        per_model[benchmark] = per_model.get(benchmark, 0) + 1
    return counts


SIMULATED_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)
"""Where a simulated row's clock starts: its times are simulated, so they come from the row's
own simulated latencies, never the wall clock, and two runs give the same bytes."""


def simulated_clock(row: TraceRow) -> TraceRow:
    """`row` with a run id and times that depend only on its simulated content.

    The run id names the model and its settings; each call starts when the previous one
    ended, from `SIMULATED_EPOCH`; slot waits, tool durations and budget waits (real wall
    time) are left out.
    """
    cursor = SIMULATED_EPOCH
    calls = []
    for record in row.calls:
        calls.append(record.model_copy(update={"started_at": _stamp(cursor), "queue_s": 0.0}))
        cursor += timedelta(seconds=record.latency_s)
    tools = [
        record.model_copy(update={"duration_s": None, "budget_wait_s": None})
        for record in row.tool_calls
    ]
    return row.model_copy(
        update={
            "run_id": f"simulated-{row.model}-{settings_digest(row.settings)}",
            "calls": calls,
            "tool_calls": tools,
            "started_at": _stamp(SIMULATED_EPOCH),
            "finished_at": _stamp(SIMULATED_EPOCH + timedelta(seconds=row.latency_s or 0.0)),
        }
    )


def _stamp(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds")


def with_attempts(row: TraceRow, started: int) -> TraceRow:
    """A timed-out row counts the attempts it started, not only the ones that finished."""
    attempts = max(row.attempts, started)
    error = row.error.model_copy(update={"attempts": attempts}) if row.error else None
    return row.model_copy(update={"attempts": attempts, "error": error})


def settings_digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def now_stamp() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def new_run_id() -> str:
    """A sortable, unique id for one run."""
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)
