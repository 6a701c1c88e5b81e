"""One factory for synthetic trace rows, shared by every test that needs rows."""

from __future__ import annotations

from typing import Any

from llm_eval.schemas import ErrorInfo, TraceRow, Usage
from llm_eval.scoring.result import ScoreResult


def make_row(
    *,
    model: str = "m",
    benchmark: str = "b",
    task_id: str = "t1",
    status: str = "correct",
    answer: str = "42",
    scorer: str = "numeric",
    extracted: str | None = None,
    error_kind: str = "timeout",
    error_message: str = "timed out",
    source: str = "rule",
    **fields: Any,
) -> TraceRow:
    """A valid `TraceRow`; `status` decides whether it carries a verdict or an error.

    A correct row extracts `answer`; an incorrect one extracts `extracted` (default
    `wrong`); an unsure row carries `ScoreResult.unsure` (reason `paraphrase`); an error row
    has no response and an `ErrorInfo`. `source` says who decided a verdict (`rule`, `human`,
    `judge`). Any other TraceRow field can be given as a keyword.
    """
    is_error = status == "error"
    values: dict[str, Any] = {
        "run_id": "run-1",
        "model": model,
        "model_label": model,
        "provider": "litellm",
        "simulated": False,
        "benchmark": benchmark,
        "task_id": task_id,
        "task_type": "single_turn",
        "category": "default",
        "answer": answer,
        "scorer": scorer,
        "messages": [{"role": "user", "content": "q"}],
        "response": None if is_error else "r",
        "usage": Usage(total_tokens=50),
        "latency_s": None if is_error else 0.5,
        "status": status,
        "error": ErrorInfo(kind=error_kind, message=error_message) if is_error else None,
        "score": None if is_error else _score(status, answer, extracted, scorer, source),
        "started_at": "2026-01-01T00:00:00Z",
        "finished_at": "2026-01-01T00:00:01Z",
    }
    values.update(fields)
    return TraceRow(**values)


def _score(
    status: str, answer: str, extracted: str | None, scorer: str, source: str
) -> ScoreResult:
    """The verdict of a row with `status` (correct, incorrect or unsure)."""
    if status == "unsure":
        unsure = ScoreResult.unsure("paraphrase", method="open_answer", extracted=extracted)
        return unsure.model_copy(update={"scorer": scorer, "source": source})
    correct = status == "correct"
    return ScoreResult(
        correct=correct,
        method="exact" if correct else "no_match",
        extracted=answer if correct else (extracted or "wrong"),
        scorer=scorer,
        source=source,
    )
