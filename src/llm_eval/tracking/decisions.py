"""People's and the judge's verdicts in MLflow, beside the scorer's on each row's trace.

A row a person decided (reviews/verdicts.jsonl) gets a HUMAN-source `correct` feedback from
its reviewer; a row the judge settled, an LLM_JUDGE-source one from the judge model. Both sit
beside the scorer's own CODE verdict (`assessments`), which they never replace. A verdict a
person adds in the MLflow UI (HUMAN feedback named `correct`, a boolean) is pulled into the
file by `llm-eval review --from-mlflow`; until then `score` leaves it alone when it is newer
than the file's decision, and `track --check` reports it as not in the file.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from llm_eval.redaction import redact
from llm_eval.scoring.reviews import (
    REVIEWS_FILE,
    Review,
    ReviewKey,
    SureVerdict,
    key_digest,
    review_key,
)
from llm_eval.tracking.feedback import FeedbackRecord, FeedbackSource
from llm_eval.tracking.identity import trace_id_of, trace_key

if TYPE_CHECKING:
    from llm_eval.schemas import TraceRow
    from llm_eval.tracking.feedback import StoredFeedback
    from llm_eval.tracking.store import RecordClient

HUMAN = "HUMAN"
LLM_JUDGE = "LLM_JUDGE"
KEY_METADATA = "llm_eval.review_key"
"""Metadata naming the reply a verdict settles (`reviews.key_digest`), on the verdicts
`score` writes; a verdict added in the UI has none and settles its row's current reply."""

_TRUE = {"true", "correct", "right", "yes", "1"}
_FALSE = {"false", "incorrect", "wrong", "no", "0"}


def source_type(assessment: StoredFeedback) -> str | None:
    source = assessment.source
    return str(source.source_type) if source is not None else None


def is_decision(assessment: StoredFeedback) -> bool:
    """A person's or a judge's verdict (not the scorer's)."""
    return source_type(assessment) in {HUMAN, LLM_JUDGE}


def human_verdict(assessment: StoredFeedback) -> SureVerdict | None:
    """The verdict a person's feedback states (a boolean, or a word such as `true` or
    `wrong`); None if it states none (an error, or another value)."""
    if getattr(assessment, "error", None) is not None:
        return None
    value = getattr(assessment, "value", None)
    if isinstance(value, bool):
        return "correct" if value else "incorrect"
    word = str(value).strip().lower() if isinstance(value, str | int) else ""
    if word in _TRUE:
        return "correct"
    if word in _FALSE:
        return "incorrect"
    return None


def settled_key(assessment: StoredFeedback, row: TraceRow) -> str:
    """Digest of the reply key a human verdict settles: its metadata's, else its row's."""
    return (assessment.metadata or {}).get(KEY_METADATA) or key_digest(review_key(row))


def _millis(stamp: str | None) -> int:
    if not stamp:
        return 0
    return int(datetime.fromisoformat(stamp).timestamp() * 1000)


# --------------------------------------------------------------------------- writing


@dataclass(frozen=True)
class DecisionCounts:
    """What logging people's and the judge's verdicts did."""

    written: int
    unchanged: int
    newer_in_mlflow: int
    """Rows whose trace holds a person's verdict newer than the file's, left for a pull."""


def log_decisions(
    client: RecordClient, rows: Sequence[TraceRow], current: Mapping[str, Sequence[StoredFeedback]]
) -> DecisionCounts:
    """Give each row settled by a person or the judge that verdict on its trace.

    `current`: the valid `correct` assessments on the traces, by trace id. A verdict of the
    same source already stating the row's verdict is kept; an older one stating another is
    overridden (it stays as history); a person's newer one is left for `--from-mlflow`.
    """
    from llm_eval.tracking.assessments import write_feedback

    feedback: list[FeedbackRecord] = []
    invalidate: list[tuple[str, str]] = []
    unchanged = newer = 0
    for row in rows:
        if row.score is None or row.score.source == "rule" or row.status == "error":
            continue
        trace_id = trace_id_of(trace_key(row))
        same_source = [a for a in current.get(trace_id, ()) if _same_source(a, row)]
        differing = [a for a in same_source if _stated(a) != row.status]
        if any(_added_later(a, row.score.decided_at) for a in differing):
            newer += 1
            continue
        if not differing and len(same_source) > 0:
            unchanged += 1
            continue
        new = decision_feedback(trace_id, row)
        if differing:
            new.overrides = differing[-1].assessment_id
            invalidate.append((trace_id, str(differing[-1].assessment_id)))
        feedback.append(new)
    if feedback:
        write_feedback(client, feedback, invalidate)
    if newer:
        print(
            f"MLflow: {newer} trace(s) hold a person's verdict newer than {REVIEWS_FILE}; "
            "pull it with `llm-eval review --from-mlflow`, then rescore",
            file=sys.stderr,
        )
    return DecisionCounts(len(feedback), unchanged, newer)


def _added_later(assessment: StoredFeedback, decided_at: str | None) -> bool:
    """A person's verdict added in MLflow (not one `score` wrote) after the file's decision."""
    if KEY_METADATA in (assessment.metadata or {}) or source_type(assessment) != HUMAN:
        return False
    return (assessment.create_time_ms or 0) > _millis(decided_at)


def _same_source(assessment: StoredFeedback, row: TraceRow) -> bool:
    """A person's verdict for a reviewed row; this judge model's for a judged one."""
    assert row.score is not None
    kind = source_type(assessment)
    if row.score.source == "human":
        return kind == HUMAN
    source = assessment.source
    return kind == LLM_JUDGE and source is not None and source.source_id == row.score.decided_by


def _stated(assessment: StoredFeedback) -> str | None:
    value = getattr(assessment, "value", None)
    if source_type(assessment) == LLM_JUDGE:
        return ("correct" if value else "incorrect") if isinstance(value, bool) else None
    return human_verdict(assessment)


def decision_feedback(trace_id: str, row: TraceRow) -> FeedbackRecord:
    """The HUMAN (reviewer) or LLM_JUDGE (judge model) feedback stating the row's verdict."""
    score = row.score
    assert score is not None and score.source != "rule"
    human = score.source == "human"
    why = f"rules: {score.method}" + (f" ({score.unsure_reason})" if score.unsure_reason else "")
    note = redact(score.decision_note)[:500] if score.decision_note else ""
    origin = f"reviewed in {REVIEWS_FILE}" if human else "judge's reply"
    return FeedbackRecord(
        trace_id=trace_id,
        name="correct",
        value=row.status == "correct",
        source=FeedbackSource(
            source_type=HUMAN if human else LLM_JUDGE, source_id=score.decided_by or "unknown"
        ),
        rationale=f"{origin}{': ' + note if note else ''}; {why}",
        metadata={KEY_METADATA: key_digest(review_key(row)), "decided_at": score.decided_at or ""},
    )


# --------------------------------------------------------------------------- reading


def pull_reviews(
    rows: Sequence[TraceRow],
    current: Mapping[str, Sequence[StoredFeedback]],
    decided: Mapping[ReviewKey, Review],
) -> list[Review]:
    """People's verdicts on these rows' traces that the file lacks, as new decisions.

    For each reply key the newest readable human verdict counts; it is new if the file has
    no decision for the key, or an older one that says otherwise.
    """
    newest: dict[ReviewKey, tuple[StoredFeedback, SureVerdict]] = {}
    for row in rows:
        key = review_key(row)
        if row.score is None or row.status == "error":
            continue
        for assessment in current.get(trace_id_of(trace_key(row)), ()):
            verdict = human_verdict(assessment) if source_type(assessment) == HUMAN else None
            if verdict is None or settled_key(assessment, row) != key_digest(key):
                continue
            seen = newest.get(key)
            if seen is None or (assessment.create_time_ms or 0) > (seen[0].create_time_ms or 0):
                newest[key] = (assessment, verdict)
    pulled = []
    for key, (assessment, verdict) in newest.items():
        known = decided.get(key)
        stamp = assessment.create_time_ms or 0
        if known is not None and (known.verdict == verdict or _millis(known.timestamp) >= stamp):
            continue
        pulled.append(_pulled(key, assessment, verdict, stamp))
    return pulled


def _pulled(key: ReviewKey, assessment: StoredFeedback, verdict: SureVerdict, stamp: int) -> Review:
    benchmark, task_id, answer, digest = key
    source = assessment.source
    rationale = getattr(assessment, "rationale", None)
    return Review(
        benchmark=benchmark,
        task_id=task_id,
        answer=answer,
        reply_sha256=digest,
        verdict=verdict,
        reviewer=(source.source_id if source is not None else None) or "mlflow",
        # To the millisecond, as MLflow stamps it: the same verdict is then never "newer".
        timestamp=datetime.fromtimestamp(stamp / 1000, UTC).isoformat(timespec="milliseconds"),
        note=redact(rationale) if rationale else None,
        via="mlflow",
    )


def human_faults(
    rows: Sequence[TraceRow],
    current: Mapping[str, Sequence[Any]],
    decided: Mapping[ReviewKey, Review],
) -> tuple[int, int]:
    """(person's verdicts in MLflow that the file does not hold, reviewed rows whose trace
    lacks the person's verdict)."""
    by_digest = {key_digest(key): review for key, review in decided.items()}
    not_in_file = missing = 0
    for row in rows:
        humans = [
            a for a in current.get(trace_id_of(trace_key(row)), ()) if source_type(a) == HUMAN
        ]
        for assessment in humans:
            review = by_digest.get(settled_key(assessment, row))
            not_in_file += review is None or review.verdict != human_verdict(assessment)
        reviewed = row.score is not None and row.score.source == "human"
        missing += reviewed and not any(human_verdict(a) == row.status for a in humans)
    return not_in_file, missing


def rule_verdicts(assessments: Sequence[Any]) -> list[Any]:
    """The scorer's verdicts among a trace's (not a person's, not a judge's)."""
    return [a for a in assessments if not is_decision(a)]
