"""Turn a finished trace row into a verdict; the same code runs at run time and in `score`."""

from __future__ import annotations

from collections.abc import Iterable

from llm_eval.schemas import ScoreInfo, TraceRow


def score_row(row: TraceRow) -> TraceRow:
    """Score one row; error rows stay errors (a failed call is never a wrong answer)."""
    if row.status == "error":
        return row.model_copy(update={"score": None})
    from llm_eval.scoring import score_text

    result = score_text(
        row.response or "", row.answer, answer_regex=row.answer_regex, kind=row.scorer
    )
    score = ScoreInfo(
        correct=result.correct, method=result.method, extracted=result.extracted, scorer=row.scorer
    )
    return row.model_copy(
        update={"score": score, "status": "correct" if result.correct else "incorrect"}
    )


def score_rows(rows: Iterable[TraceRow]) -> list[TraceRow]:
    """Score every row."""
    return [score_row(row) for row in rows]
