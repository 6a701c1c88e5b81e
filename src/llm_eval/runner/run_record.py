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

RECORD_SUFFIX = ".run.json"


class StopInfo(BaseModel):
    """Why and when a run stopped before its plan was done."""

    kind: Literal["signal", "budget"]
    detail: str = Field(description="The signal's name, or which cap was reached and how.")
    at: str = Field(description="UTC time of the stop (ISO 8601).")


class RunRecord(BaseModel):
    """One run of `llm-eval run` into a results file."""

    status: Literal["complete", "stopped"]
    stop: StopInfo | None = None
    planned: dict[str, dict[str, int]] = Field(
        description="Rows the results file should hold, per model and benchmark."
    )
    cost_usd: float = Field(0.0, description="What this run's model calls cost (known costs).")
    total_tokens: int = Field(0, description="Tokens this run's model calls used.")
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
