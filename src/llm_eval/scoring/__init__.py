"""Deterministic answer scoring (SPEC 9): no judge model, every verdict says why.

    from llm_eval.scoring import score_text
    score_text("Η απάντηση είναι: **Θεσσαλονίκη**.", "Θεσσαλονίκη").correct   # True

A verdict is `correct`, `incorrect` or `unsure`; an unsure one names its class, one of
`UNSURE_REASONS`. A new scorer kind is one function registered with `@register_scorer("kind")`.
"""

from llm_eval.scoring.result import AnswerKey, RuleTrace, ScoreResult
from llm_eval.scoring.scorers import (
    SCORER_KINDS,
    explain_text,
    register_scorer,
    score_key,
    score_text,
)
from llm_eval.scoring.unsure import UNSURE_REASONS

__all__ = [
    "SCORER_KINDS",
    "UNSURE_REASONS",
    "AnswerKey",
    "RuleTrace",
    "ScoreResult",
    "explain_text",
    "register_scorer",
    "score_key",
    "score_text",
]
