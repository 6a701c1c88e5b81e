"""The judge's reply is read strictly, and its verdicts settle only rows still unsure."""

from __future__ import annotations

import pytest

from llm_eval.scoring import ScoreResult
from llm_eval.scoring.judged import (
    PROMPT_DIGEST,
    Judgement,
    apply_judgements,
    judge_key,
    judge_messages,
    parse_judge_reply,
)
from llm_eval.scoring.reviews import Review, apply_reviews, review_key
from tests.support.rows import make_row


@pytest.mark.parametrize(
    ("reply", "verdict"),
    [
        ("RIGHT", "correct"),
        ("wrong", "incorrect"),
        ("**Right**.", "correct"),
        ("  WRONG\n", "incorrect"),
        ("RIGHT, because the reply says 42", "unsure"),
        ("It is RIGHT", "unsure"),
        ("RIGHT or WRONG", "unsure"),
        ("Correct", "unsure"),
        ("RIGHT\nWRONG", "unsure"),
        ("", "unsure"),
        (None, "unsure"),
    ],
)
def test_only_a_plain_right_or_wrong_decides(reply: str | None, verdict: str) -> None:
    assert parse_judge_reply(reply) == verdict


def unsure_row(task_id: str = "t1"):
    score = ScoreResult.unsure("paraphrase", method="no_match", extracted="forty two")
    return make_row(
        task_id=task_id, status="unsure", response="forty two", score=score,
        accepted_answers=["42.0"], distractors=["24"],
        messages=[{"role": "user", "content": "Passage. How many?"}],
    )  # fmt: skip


def kept(row, verdict: str, judge: str = "judge-model") -> Judgement:
    benchmark, task_id, answer, digest = review_key(row)
    return Judgement(
        benchmark=benchmark, task_id=task_id, answer=answer, reply_sha256=digest,
        timestamp="2026-12-06T05:00:00+00:00", judge=judge, prompt=PROMPT_DIGEST,
        verdict=verdict, reply="RIGHT" if verdict == "correct" else "WRONG",
    )  # fmt: skip


def test_the_judge_settles_unsure_rows_never_a_person_nor_a_sure_rule() -> None:
    unsure, reviewed, sure = unsure_row("t1"), unsure_row("t2"), make_row(task_id="t3")
    benchmark, task_id, answer, digest = review_key(reviewed)
    person = Review(
        benchmark=benchmark, task_id=task_id, answer=answer, reply_sha256=digest,
        verdict="incorrect", reviewer="alice", timestamp="2026-12-06T04:00:00+00:00",
    )  # fmt: skip
    rows = apply_reviews([unsure, reviewed, sure], {person.key: person})
    judged = {judge_key(row, "judge-model"): kept(row, "correct") for row in rows}
    settled = apply_judgements(rows, judged, "judge-model")
    assert [row.status for row in settled] == ["correct", "incorrect", "correct"]
    sources = [row.score.source for row in settled if row.score is not None]
    assert sources == ["judge", "human", "rule"]
    assert settled[0].score is not None and settled[0].score.decided_by == "judge-model"
    assert settled[0].score.decision_note == "RIGHT"
    # Another judge's (or another prompt's) verdicts do not apply.
    assert apply_judgements(rows, judged, "other-judge")[0].status == "unsure"


def test_an_unclear_kept_reply_leaves_the_row_unsure() -> None:
    row = unsure_row()
    (same,) = apply_judgements([row], {judge_key(row, "j"): kept(row, "unsure", "j")}, "j")
    assert same.status == "unsure" and same.score is not None and same.score.source == "rule"


def test_the_judge_sees_question_key_decoys_and_reply() -> None:
    system, user = judge_messages(unsure_row())
    assert "exactly one word: RIGHT or WRONG" in system["content"]
    text = user["content"]
    assert "Passage. How many?" in text and "Expected answer: 42" in text
    assert "Also accepted: 42.0" in text and "Known wrong answers: 24" in text
    assert "<<<\nforty two\n>>>" in text
