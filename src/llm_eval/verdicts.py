"""The values a scorer hands back: a verdict with its reason, and one line of an explanation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, model_validator

Verdict = Literal["correct", "incorrect", "unsure"]
"""A scorer's three answers: sure right, sure wrong, or a reply its rules cannot settle."""

VerdictSource = Literal["rule", "human", "judge"]
"""Who decided a verdict: the deterministic rules, a person's review, or an LLM judge."""


class ScoreResult(BaseModel):
    """A verdict on one response, with the rule that decided it so a person can check why.

    The same type is returned by `score_text` and persisted as a trace row's `score`.
    `verdict` is the decision; `correct` is True only for a `correct` verdict (an unsure
    reply is never credited). Rows written before verdicts had three values carry `correct`
    only: their verdict is derived from it.
    """

    model_config = ConfigDict(frozen=True)

    correct: bool
    """Whether the response gives the expected answer (True only for a `correct` verdict)."""
    verdict: Verdict
    """`correct`, `incorrect`, or `unsure` where the rules cannot settle the reply."""
    unsure_reason: str | None = None
    """Why the rules could not decide (`self_correction`, `paraphrase`, ...); None when sure."""
    source: VerdictSource = "rule"
    """Who decided `verdict`: the rules, a person (`human`) or an LLM judge (`judge`)."""
    decided_by: str | None = None
    """The reviewer, or the judge model, when `source` is not `rule`."""
    decided_at: str | None = None
    """When the reviewer or the judge decided (ISO 8601, UTC)."""
    decision_note: str | None = None
    """The reviewer's note, or the judge's raw reply (redacted)."""
    method: str
    """Short stable name of the deciding rule, e.g. `exact`, `transliteration`, `no_match`."""
    extracted: str | None
    """The final answer extracted from the response; None when the response is empty."""
    detail: str = ""
    """A human-readable note on what the deciding rule saw."""
    scorer: str | None = None
    """The scorer kind that decided (`language`, `numeric`, `exact`, ...), once persisted."""

    @model_validator(mode="before")
    @classmethod
    def _verdict_and_correct_agree(cls, data: Any) -> Any:
        """Fill whichever of `verdict` / `correct` is missing from the other; refuse a clash."""
        if not isinstance(data, dict):
            return data
        verdict, correct = data.get("verdict"), data.get("correct")
        if verdict is None and correct is not None:
            return {**data, "verdict": "correct" if correct else "incorrect"}
        if correct is None and verdict is not None:
            return {**data, "correct": verdict == "correct"}
        if verdict is not None and bool(correct) != (verdict == "correct"):
            raise ValueError(f"correct={correct!r} contradicts verdict={verdict!r}")
        return data

    @classmethod
    def unsure(
        cls, reason: str, *, method: str, extracted: str | None, detail: str = ""
    ) -> ScoreResult:
        """A verdict the rules cannot settle, naming the class of reply (`reason`)."""
        return cls(
            correct=False, verdict="unsure", unsure_reason=reason, method=method,
            extracted=extracted, detail=detail,
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class AnswerKey:
    """Everything a scorer may know about the expected answer of one task."""

    answer: str
    """The expected answer."""
    answer_regex: str | None = None
    """A regular expression any accepted answer matches (optional)."""
    accepted: tuple[str, ...] = ()
    """Other surface forms that are fully correct (`Ιούλιο` for `Ιούλιος`)."""
    distractors: tuple[str, ...] = ()
    """Near misses the task's passage holds; a response committing to one is wrong."""
    question: str | None = None
    """The text the model was asked, to recognise a response that copies it back."""
    answer_script: str | None = None
    """`greek` when the task demands Greek script (a Latin transliteration is then wrong)."""
    answer_format: str | None = None
    """`digits` when the task demands digits (a number word is then wrong)."""

    @property
    def answers(self) -> tuple[str, ...]:
        """The expected answer first, then its accepted variants."""
        return (self.answer, *self.accepted)


@dataclass(frozen=True, slots=True)
class RuleTrace:
    """What one scoring rule concluded, as shown by `llm-eval score --explain`."""

    rule: str
    """The rule's name (the same identifier a verdict's `method` uses)."""
    matched: bool
    """Whether the rule fired (credited the answer, or vetoed it)."""
    detail: str
    """Why it fired or not."""
