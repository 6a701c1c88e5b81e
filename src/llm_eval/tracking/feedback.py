"""A verdict on a trace, as the record holds it, without MLflow's entity classes.

`score` builds its verdicts (and a person's or the judge's) as `FeedbackRecord`s; the local
SQLite store writes and reads them with the standard library (`sqlite_traces`), and every
other store gets MLflow's `Feedback` from `to_mlflow`. The attribute names are MLflow's
(`source.source_type`, `error.error_code`, `create_time_ms`, ...), so the code that compares
verdicts reads either kind alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    from mlflow.entities import Assessment, Feedback

    StoredFeedback: TypeAlias = "FeedbackRecord | Assessment"
    """A verdict read from the store: a `FeedbackRecord` (the SQL stores) or MLflow's
    `Assessment` (MLflow's API); the code that compares them reads the names both have."""

ASSESSMENT_NAME = "correct"


@dataclass
class FeedbackSource:
    """Who gave the verdict: `CODE` (the scorer), `HUMAN` or `LLM_JUDGE`, and which one."""

    source_type: str
    source_id: str | None


@dataclass
class FeedbackError:
    """Why a row has no verdict (the row's error kind and its redacted message)."""

    error_code: str
    error_message: str | None = None


@dataclass
class FeedbackRecord:
    """One `correct` feedback on one trace: a value, or an error instead of one."""

    trace_id: str
    source: FeedbackSource
    name: str = ASSESSMENT_NAME
    value: Any = None
    error: FeedbackError | None = None
    rationale: str | None = None
    metadata: dict[str, str] | None = None
    overrides: str | None = None
    assessment_id: str | None = None
    valid: bool = True
    create_time_ms: int | None = None
    last_update_time_ms: int | None = None
    span_id: str | None = None
    run_id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    """Columns the store holds that the comparisons above do not read."""

    def to_mlflow(self) -> Feedback:
        """The same verdict as MLflow's `Feedback`, for MLflow's API."""
        from mlflow.entities import AssessmentError, AssessmentSource, Feedback

        feedback = Feedback(
            name=self.name,
            value=self.value,
            source=AssessmentSource(
                source_type=self.source.source_type, source_id=self.source.source_id
            ),
            error=(
                AssessmentError(
                    error_code=self.error.error_code, error_message=self.error.error_message
                )
                if self.error is not None
                else None
            ),
            rationale=self.rationale,
            metadata=self.metadata,
            overrides=self.overrides,
        )
        feedback.trace_id = self.trace_id
        return feedback
