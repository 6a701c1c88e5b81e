"""Which of people's verdicts in MLflow are pulled into the reviews file, and which the
audit counts as not in it (MLflow's own entities, no store)."""

from __future__ import annotations

from typing import Any

import pytest

from llm_eval.scoring import ScoreResult
from llm_eval.scoring.reviews import Review, apply_reviews, review_key
from llm_eval.tracking.decisions import human_faults, human_verdict, pull_reviews
from llm_eval.tracking.identity import trace_id_of, trace_key
from tests.support.rows import make_row

FILE_TIME_MS = 1_796_536_800_000  # 2026-12-06T06:00:00Z


def row() -> Any:
    score = ScoreResult.unsure("hedge", method="maybe", extracted=None)
    return make_row(status="unsure", response="maybe 42", score=score)


def human(value: object, at_ms: int, who: str = "bob") -> Any:
    from mlflow.entities import AssessmentSource, AssessmentSourceType, Feedback

    return Feedback(
        name="correct", value=value, rationale="looked again", create_time_ms=at_ms,
        source=AssessmentSource(source_type=AssessmentSourceType.HUMAN, source_id=who),
    )  # fmt: skip


def file_decision(the_row: Any, verdict: str = "correct") -> dict[Any, Review]:
    benchmark, task_id, answer, digest = review_key(the_row)
    review = Review(
        benchmark=benchmark, task_id=task_id, answer=answer, reply_sha256=digest,
        verdict=verdict, reviewer="alice", timestamp="2026-12-06T06:00:00+00:00",
    )  # fmt: skip
    return {review.key: review}


@pytest.mark.parametrize(
    ("value", "verdict"),
    [(True, "correct"), (False, "incorrect"), ("wrong", "incorrect"), ("yes", "correct"),
     (0.5, None), ("maybe", None)],
)  # fmt: skip
def test_a_persons_value_reads_as_a_verdict_or_none(value: object, verdict: str | None) -> None:
    assert human_verdict(human(value, FILE_TIME_MS)) == verdict


def test_only_a_newer_different_verdict_is_pulled() -> None:
    the_row = row()
    trace = trace_id_of(trace_key(the_row))
    decided = file_decision(the_row, "correct")
    older = {trace: [human(False, FILE_TIME_MS - 1000)]}
    same = {trace: [human(True, FILE_TIME_MS + 1000)]}
    newer = {trace: [human(False, FILE_TIME_MS + 1000), human(True, FILE_TIME_MS - 5)]}
    assert pull_reviews([the_row], older, decided) == []
    assert pull_reviews([the_row], same, decided) == []
    (pulled,) = pull_reviews([the_row], newer, decided)
    assert (pulled.verdict, pulled.reviewer, pulled.via) == ("incorrect", "bob", "mlflow")
    assert pulled.timestamp == "2026-12-06T06:00:01.000+00:00"
    (first,) = pull_reviews([the_row], older, {})  # the file has no decision: any counts
    assert first.verdict == "incorrect"


def test_the_audit_counts_verdicts_not_in_the_file_and_reviewed_rows_without_one() -> None:
    the_row = row()
    trace = trace_id_of(trace_key(the_row))
    decided = file_decision(the_row, "correct")
    (reviewed,) = apply_reviews([the_row], decided)
    assert human_faults([reviewed], {trace: [human(True, FILE_TIME_MS)]}, decided) == (0, 0)
    assert human_faults([reviewed], {trace: [human(False, FILE_TIME_MS)]}, decided) == (1, 1)
    assert human_faults([reviewed], {}, decided) == (0, 1)
    assert human_faults([the_row], {trace: [human(True, FILE_TIME_MS)]}, {}) == (1, 0)
