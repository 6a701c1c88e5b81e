"""Turn a finished trace row into a verdict; the same code runs at run time and in `score`."""

from __future__ import annotations

from collections.abc import Iterable

from llm_eval.redaction import redact
from llm_eval.schemas import ErrorInfo, TraceRow


def score_row(row: TraceRow) -> TraceRow:
    """Score one row; error rows stay errors (a failed call is never a wrong answer).

    Nothing in a response may end a run: an exception inside a scorer turns this row into an
    error row of kind `scoring_error` (not a wrong answer), and the run goes on.
    """
    if row.status == "error":
        if row.error is not None and row.error.kind == "scoring_error":
            row = row.model_copy(update={"status": "incorrect", "error": None})
        else:
            return row.model_copy(update={"score": None})
    from llm_eval.scoring.scorers import score_key

    try:
        result = score_key(row.response or "", row.answer_key(), row.scorer, truncated=row.cut_off)
    except Exception as exc:  # any scorer bug or pathological input: record, never raise
        message = redact(f"{type(exc).__name__}: {exc}")[:2000]
        error = ErrorInfo(kind="scoring_error", message=message, attempts=row.attempts)
        return row.model_copy(update={"status": "error", "score": None, "error": error})
    score = result.model_copy(update={"scorer": row.scorer})
    return row.model_copy(update={"score": score, "status": result.verdict})


def score_rows(rows: Iterable[TraceRow]) -> list[TraceRow]:
    """Score every row."""
    return [score_row(row) for row in rows]
