"""Check the MLflow record of a trace file: one trace per row, one current verdict per trace,
and that verdict the one the file holds for the row today.

Read through MLflow's public search only (not the writers' own queries), so it checks what a
user of the UI or of `MlflowClient` sees: traces are found by the key tags every trace carries
(`identity`), and a trace's current verdicts are its valid `correct` assessments. A person's
(HUMAN) or a judge's (LLM_JUDGE) verdict may sit beside the scorer's: the scorer's must be
one, and each person's must be the decision reviews/verdicts.jsonl holds for its reply.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from llm_eval.tracking.identity import TraceKey, key_from_tags, trace_id_of, trace_key

if TYPE_CHECKING:
    from mlflow import MlflowClient

    from llm_eval.schemas import TraceRow
    from llm_eval.scoring.reviews import Review, ReviewKey


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
    differing_verdicts: int = 0
    """Traces whose current scorer's verdict is not the row's verdict in the file."""
    human_not_in_file: int = 0
    """People's verdicts in MLflow that reviews/verdicts.jsonl does not hold (pull them)."""
    missing_human: int = 0
    """Rows a person decided whose trace lacks that verdict (`track` writes it)."""

    @property
    def faults(self) -> int:
        return (
            self.missing_traces
            + self.duplicate_traces
            + self.missing_verdicts
            + self.duplicate_verdicts
            + self.differing_verdicts
            + self.human_not_in_file
            + self.missing_human
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
                f"({self.contradictory_verdicts} contradictory), "
                f"{self.differing_verdicts} verdict(s) differ from the file"
            )
            if self.human_not_in_file or self.missing_human:
                text += (
                    f", {self.human_not_in_file} human verdict(s) not in the reviews file, "
                    f"{self.missing_human} reviewed row(s) without their human verdict"
                )
        return text + (": OK" if not self.faults else "")


def audit_rows(
    client: MlflowClient,
    experiment_id: str,
    source: str,
    rows: Sequence[TraceRow],
    *,
    scored: bool,
    reviews: Mapping[ReviewKey, Review] | None = None,
) -> Audit:
    """Count the faults of the rows' record in the store (`reviews`: the file's decisions,
    which people's verdicts in MLflow must match)."""
    from llm_eval.tracking.assessments import FEEDBACK_NAME
    from llm_eval.tracking.decisions import human_faults, rule_verdicts
    from llm_eval.tracking.record import search_trace_infos

    by_key: dict[TraceKey, list[Any]] = {}
    for run_id in sorted({row.run_id for row in rows}):
        for info in search_trace_infos(client, experiment_id, run_id):
            key = key_from_tags(dict(getattr(info, "tags", {}) or {}))
            if key is not None:
                by_key.setdefault(key, []).append(info)
    keys = list(dict.fromkeys(trace_key(row) for row in rows))
    counts = [len(by_key.get(key, [])) for key in keys]
    missing_verdicts = duplicates = contradictory = differing = not_in_file = missing_human = 0
    if scored:
        by_trace: dict[str, list[Any]] = {}
        row_of = {trace_key(row): row for row in rows}
        for key in keys:
            everyone = [
                assessment
                for info in by_key.get(key, [])
                for assessment in info.assessments
                if assessment.name == FEEDBACK_NAME and assessment.valid
            ]
            by_trace[trace_id_of(key)] = everyone
            current = rule_verdicts(everyone)
            values = {_verdict(assessment) for assessment in current}
            missing_verdicts += not current and key in by_key
            duplicates += len(current) > 1
            contradictory += len(values) > 1
            differing += any(_verdict(a) != _expected(row_of[key]) for a in current)
        not_in_file, missing_human = human_faults(rows, by_trace, reviews or {})
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
        differing_verdicts=differing,
        human_not_in_file=not_in_file,
        missing_human=missing_human,
    )


def _expected(row: TraceRow) -> str:
    """The scorer's verdict on the row's trace, as `_verdict` states it, that the file implies:
    the row's verdict (True only for `correct`; unsure is False), or an error for a row
    without one (`assessments.verdict_feedback` writes the same)."""
    if row.status == "error" or row.score is None:
        return f"error:{row.error.kind if row.error else 'unscored'}"
    return repr(row.status == "correct")


def _verdict(assessment: Any) -> str:
    """The verdict an assessment states: its value, or its error code."""
    error = getattr(assessment, "error", None)
    return f"error:{error.error_code}" if error is not None else repr(assessment.value)
