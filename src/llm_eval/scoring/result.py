"""The scorer's values, re-exported: they live in `llm_eval.verdicts`, below `schemas`, so
that the persisted row types load no scoring module."""

from llm_eval.verdicts import AnswerKey, RuleTrace, ScoreResult, Verdict, VerdictSource

__all__ = ["AnswerKey", "RuleTrace", "ScoreResult", "Verdict", "VerdictSource"]
