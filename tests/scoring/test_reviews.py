"""People's verdicts file: what a decision settles, when it applies, and bad lines located."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llm_eval.errors import ConfigError
from llm_eval.scoring import ScoreResult
from llm_eval.scoring.reviews import (
    Review,
    append_records,
    apply_reviews,
    read_reviews,
    reply_digest,
    review_key,
)
from tests.support.rows import make_row


def unsure_row(response: str = "maybe 42", answer: str = "42", **fields: object):
    score = ScoreResult.unsure("hedge", method="hedge_rule", extracted=None)
    return make_row(status="unsure", answer=answer, response=response, score=score, **fields)


def decision(row, verdict: str = "correct", **fields: object) -> Review:
    benchmark, task_id, answer, digest = review_key(row)
    values = dict(
        benchmark=benchmark, task_id=task_id, answer=answer, reply_sha256=digest,
        verdict=verdict, reviewer="alice", timestamp="2026-12-06T05:00:00+00:00",
    )  # fmt: skip
    return Review.model_validate({**values, **fields})


def test_a_decision_settles_the_same_reply_in_every_run_model_and_epoch(tmp_path: Path) -> None:
    path = tmp_path / "verdicts.jsonl"
    first = unsure_row()
    append_records(path, [decision(first, note="slip")])
    rows = [
        first,
        unsure_row(" maybe 42\n", model="other", run_id="run-2", epoch=3),  # ends stripped only
        unsure_row("maybe  42"),  # another reply
        unsure_row(task_id="t2"),  # another task
    ]
    settled = apply_reviews(rows, read_reviews(path))
    assert [row.status for row in settled] == ["correct", "correct", "unsure", "unsure"]
    score = settled[1].score
    assert score is not None and score.correct
    assert (score.source, score.decided_by, score.decision_note) == ("human", "alice", "slip")
    assert (score.method, score.unsure_reason) == ("hedge_rule", "hedge")  # the rule's record


def test_a_decision_made_under_another_answer_does_not_apply(tmp_path: Path) -> None:
    path = tmp_path / "verdicts.jsonl"
    append_records(path, [decision(unsure_row(answer="42"))])
    (row,) = apply_reviews([unsure_row(answer="43")], read_reviews(path))
    assert row.status == "unsure"


def test_the_last_decision_of_a_reply_wins_and_error_rows_stay_errors(tmp_path: Path) -> None:
    path = tmp_path / "verdicts.jsonl"
    row = unsure_row()
    append_records(path, [decision(row, "correct")])
    append_records(path, [decision(row, "incorrect", reviewer="bob")])
    error = make_row(status="error")
    reviewed, untouched = apply_reviews([row, error], read_reviews(path))
    assert reviewed.status == "incorrect" and reviewed.score is not None
    assert reviewed.score.decided_by == "bob"
    assert untouched == error


def test_reply_digest_strips_only_the_ends() -> None:
    assert reply_digest("  a b \n") == reply_digest("a b")
    assert reply_digest("a  b") != reply_digest("a b")
    assert reply_digest(None) == reply_digest("")


def test_bad_lines_are_reported_with_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "verdicts.jsonl"
    good = decision(unsure_row()).model_dump(exclude_none=True)
    lines = [
        json.dumps(good),
        "{not json",
        json.dumps({**good, "verdict": "unsure"}),
        "",
        json.dumps({k: v for k, v in good.items() if k != "reviewer"}),
        json.dumps({**good, "timestamp": "yesterday"}),
        json.dumps({**good, "extra": 1}),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        read_reviews(path)
    where = [f"{p.path}:{p.line}" for p in caught.value.problems]
    assert where == [f"{path}:{n}" for n in (2, 3, 5, 6, 7)]
    text = str(caught.value)
    assert "not JSON" in text and "verdict" in text and "reviewer" in text
    assert "not ISO 8601" in text and "extra" in text


def test_a_missing_file_or_one_with_its_header_only_holds_no_decision(tmp_path: Path) -> None:
    assert read_reviews(tmp_path / "none.jsonl") == {}
    header = tmp_path / "verdicts.jsonl"
    header.write_text("# people's verdicts, one JSON line each\n\n", encoding="utf-8")
    assert read_reviews(header) == {}
