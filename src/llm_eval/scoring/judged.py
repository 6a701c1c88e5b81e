"""An optional LLM judge for the replies still unsure after people's reviews: its fixed
prompt, the strict reading of its reply, and the file that keeps its verdicts.

The judge never overrides a person and never touches a sure rule verdict. Its verdicts are
kept in `reviews/judge.jsonl`, keyed like people's reviews plus the judge model and the
prompt's digest, so rescoring with the same judge calls it only for replies it has not seen
(a new prompt asks again). A reply that is not plainly RIGHT or WRONG is kept too, as
`unsure`, so it is not asked again either; a provider error is not kept, and the row stays
unsure. Pure: the calls are made by `llm_eval.runner.judge`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from llm_eval.schemas import TraceRow
from llm_eval.scoring.reviews import KeyedRecord, decided, read_records, review_key

JUDGE_FILE = Path("reviews") / "judge.jsonl"
"""Where the judge's verdicts are kept, relative to the config root."""

JUDGE_SYSTEM = (
    "You grade one answer to an exam question. You are given the question (with any passage "
    "it comes with), the expected answer, other accepted forms of it, answers known to be "
    "wrong, and the candidate's reply. The reply is RIGHT if the answer it finally commits "
    "to means the same as the expected answer (another language, script, inflection or "
    "wording is fine). It is WRONG if it commits to anything else, hedges between "
    "candidates, gives a range, or commits to nothing. Reply with exactly one word: RIGHT "
    "or WRONG."
)
JUDGE_TEMPLATE = (
    "Question:\n{question}\n\nExpected answer: {answer}\nAlso accepted: {accepted}\n"
    "Known wrong answers: {decoys}\n\nCandidate's reply:\n<<<\n{reply}\n>>>\n\n"
    "RIGHT or WRONG?"
)
PROMPT_DIGEST = hashlib.sha256(f"{JUDGE_SYSTEM}\0{JUDGE_TEMPLATE}".encode()).hexdigest()[:12]
"""Names the prompt in the judge file: a changed prompt is a different judge."""

MAX_KEPT_REPLY = 2000
"""Characters of the judge's raw reply kept in the file and on the row."""

_PLAIN_WORD = re.compile(r"^[\s*_`\"'«»]*(RIGHT|WRONG)[\s*_`\"'«».!]*$", re.IGNORECASE)

JudgeKey = tuple[str, str, str, str, str, str]
"""(benchmark, task id, answer, reply digest, judge model, prompt digest)."""


class Judgement(KeyedRecord):
    """One judge verdict on one reply."""

    judge: str = Field(min_length=1, description="The configured model that judged.")
    prompt: str = Field(min_length=1, description="Digest of the judge prompt used.")
    verdict: Literal["correct", "incorrect", "unsure"]
    reply: str = Field(description="The judge's raw reply, redacted and cut.")

    @property
    def judge_key(self) -> JudgeKey:
        return (*self.key, self.judge, self.prompt)


def parse_judge_reply(text: str | None) -> Literal["correct", "incorrect", "unsure"]:
    """RIGHT -> correct, WRONG -> incorrect (one word, any case, bold or a full stop
    allowed); anything else, an explanation included, stays unsure."""
    match = _PLAIN_WORD.match(text or "")
    if match is None:
        return "unsure"
    return "correct" if match.group(1).upper() == "RIGHT" else "incorrect"


def judge_messages(row: TraceRow) -> list[dict[str, Any]]:
    """The two messages the judge is sent for one row."""
    question = "\n\n".join(
        str(message.get("content")) for message in row.messages if message.get("role") == "user"
    )
    user = JUDGE_TEMPLATE.format(
        question=question or "(not recorded)",
        answer=row.answer,
        accepted=", ".join(row.accepted_answers) or "(none)",
        decoys=", ".join(row.distractors) or "(none)",
        reply=(row.response or "").strip(),
    )
    return [{"role": "system", "content": JUDGE_SYSTEM}, {"role": "user", "content": user}]


def judge_key(row: TraceRow, judge: str) -> JudgeKey:
    """The key the judge's verdict on this row's reply is kept under."""
    return (*review_key(row), judge, PROMPT_DIGEST)


def read_judgements(path: Path) -> dict[JudgeKey, Judgement]:
    """The kept verdict of each (reply, judge, prompt); bad lines raise with file:line."""
    return {record.judge_key: record for record in read_records(path, Judgement)}


def needs_judge(row: TraceRow) -> bool:
    """Rows the judge may settle: still unsure after the rules and people's reviews."""
    return row.status == "unsure" and row.score is not None and row.score.source == "rule"


def apply_judgements(
    rows: Sequence[TraceRow], kept: dict[JudgeKey, Judgement], judge: str
) -> list[TraceRow]:
    """Rows still unsure take the judge's kept RIGHT / WRONG, `source` `judge`."""
    return [_judged(row, kept.get(judge_key(row, judge))) for row in rows]


def _judged(row: TraceRow, judgement: Judgement | None) -> TraceRow:
    if judgement is None or judgement.verdict == "unsure" or not needs_judge(row):
        return row
    return decided(
        row,
        judgement.verdict,
        "judge",
        by=judgement.judge,
        at=judgement.timestamp,
        note=judgement.reply,
    )
