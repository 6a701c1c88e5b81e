"""Deterministic answer scoring (SPEC 9): no judge model, every verdict says why.

    from llm_eval.scoring import score_text
    score_text("Η απάντηση είναι: **Θεσσαλονίκη**.", "Θεσσαλονίκη").correct   # True

A new scorer kind is one function registered with `@register_scorer("kind")`.
"""

from llm_eval.scoring.result import AnswerKey, RuleTrace, ScoreResult
from llm_eval.scoring.scorers import (
    SCORER_KINDS,
    explain_text,
    register_scorer,
    score_key,
    score_text,
)

__all__ = [
    "SCORER_KINDS",
    "AnswerKey",
    "RuleTrace",
    "ScoreResult",
    "explain_text",
    "register_scorer",
    "score_key",
    "score_text",
]
