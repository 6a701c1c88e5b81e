"""The run record `<results>.run.json`: what a run planned, and whether and why it stopped.

The trace file holds the rows a run finished; only the record knows the rows it did not, so a
report of a stopped run can count what is missing per model and benchmark and say why.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError

from llm_eval.errors import UsageError
from llm_eval.runner.budget import Budget
from llm_eval.runner.stopping import Spend

RECORD_SUFFIX = ".run.json"


class StopInfo(BaseModel):
    """Why and when a run stopped before its plan was done."""

    kind: Literal["signal", "budget"]
    detail: str = Field(description="The signal's name, or which cap was reached and how.")
    at: str = Field(description="UTC time of the stop (ISO 8601).")


class CapInfo(BaseModel):
    """The spending caps of the last run into the file, and what that run spent."""

    max_cost_usd: float | None = None
    max_total_tokens: int | None = None
    cost_usd: float = Field(description="What this run's model calls cost (known costs).")
    total_tokens: int = Field(description="Tokens this run's model calls used (known).")
    over_cost_usd: float = Field(0.0, description="Spent past --max-cost.")
    over_tokens: int = Field(0, description="Used past --max-total-tokens.")
    calls_in_flight_at_cap: int = Field(
        0,
        description="Calls in flight when sending stopped at a cap: all that can be spent "
        "past it; their replies are kept.",
    )
    calls_cancelled: int = Field(0, description="This run's calls cut off in flight.")


class RunRecord(BaseModel):
    """One run of `llm-eval run` into a results file."""

    status: Literal["complete", "stopped"]
    stop: StopInfo | None = None
    planned: dict[str, dict[str, int]] = Field(
        description="Rows the results file should hold, per model and benchmark."
    )
    cost_usd: float = Field(
        0.0, description="What the model calls of every run into the file cost (known costs)."
    )
    total_tokens: int = Field(0, description="Tokens the model calls of every run used (known).")
    unknown_cost_calls: int = Field(0, description="Paid calls whose cost is unknown.")
    unknown_token_calls: int = Field(0, description="Paid calls whose token count is unknown.")
    calls_cancelled: int = Field(
        0, description="Calls cut off in flight: perhaps charged, not in `cost_usd`."
    )
    caps: CapInfo | None = Field(None, description="The last run's caps and how they held.")
    resume_command: str | None = Field(None, description="How to complete a stopped run.")
    trace: str | None = Field(
        None,
        description="The trace file the run wrote, as given; a scored copy keeps naming it, "
        "so `run --only-wrong SCORED` reruns into the trace the rows came from.",
    )


def record_path(results: Path) -> Path:
    """`DIR/NAME.jsonl` -> `DIR/NAME.jsonl.run.json`."""
    return results.with_name(results.name + RECORD_SUFFIX)


def read_record(results: Path) -> RunRecord | None:
    """The record beside `results`, or None if there is none."""
    path = record_path(results)
    if not path.is_file():
        return None
    try:
        return RunRecord.model_validate_json(path.read_text(encoding="utf-8"))
    except (ValidationError, ValueError) as exc:
        raise UsageError(
            f"{path}: not a run record of llm-eval ({exc.__class__.__name__})"
        ) from None


def write_record(results: Path, record: RunRecord) -> None:
    """Write the record atomically beside `results`."""
    path = record_path(results)
    temporary = path.with_name(path.name + ".tmp")
    text = json.dumps(record.model_dump(mode="json"), indent=2, sort_keys=True)
    temporary.write_text(text + "\n", encoding="utf-8")
    os.replace(temporary, path)


def merged_plan(
    earlier: dict[str, dict[str, int]], now: dict[str, dict[str, int]]
) -> dict[str, dict[str, int]]:
    """A rerun into an existing file plans a part of it: the file still owes the rest."""
    merged = {model: dict(benchmarks) for model, benchmarks in earlier.items()}
    for model, benchmarks in now.items():
        for benchmark, rows in benchmarks.items():
            previous = merged.setdefault(model, {}).get(benchmark, 0)
            merged[model][benchmark] = max(previous, rows)
    return merged


def cap_info(budget: Budget, spend: Spend) -> CapInfo:
    """What one run spent against its caps."""
    return CapInfo(
        max_cost_usd=budget.max_cost_usd,
        max_total_tokens=budget.max_total_tokens,
        cost_usd=round(spend.cost_usd, 6),
        total_tokens=spend.total_tokens,
        over_cost_usd=round(budget.over_cost(spend), 6),
        over_tokens=budget.over_tokens(spend),
        calls_in_flight_at_cap=spend.calls_in_flight_at_cap,
        calls_cancelled=spend.calls_cancelled,
    )


def with_earlier_spend(record: RunRecord, earlier: RunRecord | None) -> RunRecord:
    """`record` (one run's spend) plus what the earlier runs into the same file spent."""
    if earlier is None:
        return record
    return record.model_copy(
        update={
            "cost_usd": round(earlier.cost_usd + record.cost_usd, 6),
            "total_tokens": earlier.total_tokens + record.total_tokens,
            "unknown_cost_calls": earlier.unknown_cost_calls + record.unknown_cost_calls,
            "unknown_token_calls": earlier.unknown_token_calls + record.unknown_token_calls,
            "calls_cancelled": earlier.calls_cancelled + record.calls_cancelled,
        }
    )


def copy_record(source_results: Path, target_results: Path) -> None:
    """Carry the record of `source_results` to `target_results` (rescoring to a new file);
    a stale record at the target is removed when the source has none."""
    source, target = record_path(source_results), record_path(target_results)
    if source.resolve() == target.resolve():
        return
    if source.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(source.read_bytes())
    elif target.is_file():
        target.unlink()
