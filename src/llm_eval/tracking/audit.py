"""Check the MLflow record of a trace file: one trace per row, one current verdict per trace.

Read through MLflow's public search only (not the writers' own queries), so it checks what a
user of the UI or of `MlflowClient` sees: traces are found by the key tags every trace carries
(`identity`), and a trace's current verdicts are its valid `correct` assessments.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from llm_eval.tracking.identity import TraceKey, key_from_tags, trace_key

if TYPE_CHECKING:
    from mlflow import MlflowClient

    from llm_eval.schemas import TraceRow


@dataclass(frozen=True)
class Audit:
    """Counts of one results file's record; every count but `rows` and `traced` is a fault."""

    source: str
    rows: int
    traced: int
    missing_traces: int
    duplicate_traces: int
    scored: bool
    missing_verdicts: int = 0
    duplicate_verdicts: int = 0
    contradictory_verdicts: int = 0

    @property
    def faults(self) -> int:
        return (
            self.missing_traces
            + self.duplicate_traces
            + self.missing_verdicts
            + self.duplicate_verdicts
        )

    def line(self) -> str:
        """One line: the counts, and whether the record is whole."""
        text = (
            f"{self.source}: {self.rows} rows, {self.traced} traced, "
            f"{self.missing_traces} missing trace(s), {self.duplicate_traces} duplicate trace(s)"
        )
        if self.scored:
            text += (
                f", {self.missing_verdicts} missing verdict(s), "
                f"{self.duplicate_verdicts} trace(s) with more than one current verdict "
                f"({self.contradictory_verdicts} contradictory)"
            )
        return text + (": OK" if not self.faults else "")


def audit_rows(
    client: MlflowClient,
    experiment_id: str,
    source: str,
    rows: Sequence[TraceRow],
    *,
    scored: bool,
) -> Audit:
    """Count the faults of the rows' record in the store."""
    from llm_eval.tracking.assessments import FEEDBACK_NAME
    from llm_eval.tracking.record import search_trace_infos

    by_key: dict[TraceKey, list[Any]] = {}
    for run_id in sorted({row.run_id for row in rows}):
        for info in search_trace_infos(client, experiment_id, run_id):
            key = key_from_tags(dict(getattr(info, "tags", {}) or {}))
            if key is not None:
                by_key.setdefault(key, []).append(info)
    keys = list(dict.fromkeys(trace_key(row) for row in rows))
    counts = [len(by_key.get(key, [])) for key in keys]
    missing_verdicts = duplicates = contradictory = 0
    if scored:
        for key in keys:
            current = [
                assessment
                for info in by_key.get(key, [])
                for assessment in info.assessments
                if assessment.name == FEEDBACK_NAME and assessment.valid
            ]
            values = {_verdict(assessment) for assessment in current}
            missing_verdicts += not current and key in by_key
            duplicates += len(current) > 1
            contradictory += len(values) > 1
    return Audit(
        source=source,
        rows=len(keys),
        traced=sum(count > 0 for count in counts),
        missing_traces=sum(count == 0 for count in counts),
        duplicate_traces=sum(max(count - 1, 0) for count in counts),
        scored=scored,
        missing_verdicts=missing_verdicts,
        duplicate_verdicts=duplicates,
        contradictory_verdicts=contradictory,
    )


def _verdict(assessment: Any) -> str:
    """The verdict an assessment states: its value, or its error code."""
    error = getattr(assessment, "error", None)
    return f"error:{error.error_code}" if error is not None else repr(assessment.value)
