"""A scorer that is unsure of any reply saying "maybe", and rows for it: unsure rows for the
review and judge tests, whatever the real scorer's rules decide."""

from __future__ import annotations

from typing import Any

from llm_eval.schemas import TraceRow
from llm_eval.scoring import AnswerKey, ScoreResult, register_scorer
from tests.support.rows import make_row

UNSURE_SCORER = "maybe_unsure"


@register_scorer(UNSURE_SCORER)
def maybe_unsure(response: str, key: AnswerKey) -> ScoreResult:
    """Unsure of any reply saying "maybe"; otherwise right only for the answer itself."""
    if "maybe" in response:
        return ScoreResult.unsure("hedge", method="maybe", extracted=None, detail="says maybe")
    right = response.strip() == key.answer
    return ScoreResult(correct=right, method="exact", extracted=response.strip())


def unscored_row(model: str, task_id: str, response: str, **fields: Any) -> TraceRow:
    """A row of benchmark `b` (answer 42) for the scorer above, with its question."""
    return make_row(
        model=model,
        task_id=task_id,
        scorer=UNSURE_SCORER,
        response=response,
        messages=[
            {"role": "user", "content": f"Passage ... How many? ({task_id})"},
            {"role": "assistant", "content": response},
        ],
        accepted_answers=["forty-two"],
        distractors=["24"],
        **fields,
    )
