"""The values a scorer hands back: a verdict with its reason, and one line of an explanation."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict


class ScoreResult(BaseModel):
    """A verdict on one response, with the rule that decided it so a person can check why.

    The same type is returned by `score_text` and persisted as a trace row's `score`.
    """

    model_config = ConfigDict(frozen=True)

    correct: bool
    """Whether the response gives the expected answer."""
    method: str
    """Short stable name of the deciding rule, e.g. `exact`, `transliteration`, `no_match`."""
    extracted: str | None
    """The final answer extracted from the response; None when the response is empty."""
    detail: str = ""
    """A human-readable note on what the deciding rule saw."""
    scorer: str | None = None
    """The scorer kind that decided (`language`, `numeric`, `exact`, ...), once persisted."""


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
