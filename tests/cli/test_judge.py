"""`score --judge MODEL` over real HTTP (the local OpenAI-compatible stub): only rows still
unsure after people's reviews are asked, each reply once; the verdicts are kept in
reviews/judge.jsonl so a rescore asks nothing; a failing judge leaves rows unsure; without
`--judge` nothing is judged. Tracked: the judge's verdict is an LLM_JUDGE assessment."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from llm_eval.runner.trace_io import read_rows, write_rows
from llm_eval.scoring.judged import JUDGE_FILE
from llm_eval.scoring.reviews import REVIEWS_FILE, Review, append_records, review_key
from llm_eval.tracking.identity import trace_id_of, trace_key
from tests.cli.test_review import client_for, invoke
from tests.support.catalog import add_models
from tests.support.openai_stub import StubServer, start_stub
from tests.support.unsure_scorer import unscored_row

pytestmark = pytest.mark.slow

JUDGE_SAYS = {"maybe 42": "RIGHT", "maybe 24": "**Wrong**", "maybe 7": "RIGHT, I believe"}


def judge_reply(body: dict[str, Any]) -> str:
    """The judge's word for the reply between <<< and >>> in the request."""
    text = body["messages"][-1]["content"]
    reply = text.split("<<<\n", 1)[1].split("\n>>>", 1)[0]
    return JUDGE_SAYS.get(reply, "RIGHT")


@pytest.fixture()
def stub() -> Iterator[StubServer]:
    with start_stub(answer_fn=judge_reply) as server:
        yield server


@pytest.fixture()
def suite(monkeypatch: pytest.MonkeyPatch, config_copy: Path, stub: StubServer) -> Path:
    for name in ("MLFLOW_TRACKING_URI", "DVC_ROOT", "DVC_EXP_NAME", "DVC_STAGE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LLM_EVAL_TRACKING", "1")
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    judge = {"model": "openai/stub-model", "api_base": stub.base_url, "max_concurrency": 2}
    add_models(config_copy, {
        "judge-http": {"provider": "openai_compatible", **judge},
        "judge-litellm": {"provider": "litellm", **judge},
    })  # fmt: skip
    rows = [
        unscored_row("m1", "t1", "maybe 42"),
        unscored_row("m2", "t1", "maybe 42"),  # the same reply: asked once
        unscored_row("m1", "t2", "maybe 24"),
        unscored_row("m1", "t3", "maybe 7"),
        unscored_row("m1", "t4", "maybe 5"),  # a person decided it
        unscored_row("m1", "t5", "42"),  # sure
    ]
    write_rows(config_copy / "t.jsonl", rows)
    benchmark, task_id, answer, digest = review_key(rows[4])
    append_records(config_copy / REVIEWS_FILE, [Review(
        benchmark=benchmark, task_id=task_id, answer=answer, reply_sha256=digest,
        verdict="incorrect", reviewer="alice", timestamp="2026-12-06T05:00:00+00:00",
    )])  # fmt: skip
    return config_copy


def statuses(path: Path) -> list[str]:
    return [row.status for row in read_rows(path)]


def test_the_judge_settles_only_unsure_rows_once_and_is_kept(suite: Path, stub: StubServer) -> None:
    scored = suite / "s.jsonl"
    args = ("score", "--results", str(suite / "t.jsonl"), "--output", str(scored))
    judged = invoke(suite, *args, "--judge", "judge-http")
    assert judged.exit_code == 0, judged.output
    # The test benchmark `b` is in no task file: only that warning may show.
    warnings = [line for line in judged.output.splitlines() if "warning" in line.lower()]
    assert all("no longer in the task files" in line for line in warnings), judged.output
    assert stub.total_requests == 3  # t1 once, t2, t3; never the reviewed t4 nor the sure t5
    assert statuses(scored) == ["correct", "correct", "incorrect", "unsure", "incorrect", "correct"]
    rows = read_rows(scored)
    sources = [row.score.source for row in rows if row.score is not None]
    assert sources == ["judge", "judge", "judge", "rule", "human", "rule"]
    first = rows[0].score
    assert first is not None and (first.decided_by, first.decision_note) == ("judge-http", "RIGHT")
    assert first.unsure_reason == "hedge"  # the rule's record stays
    kept = [json.loads(line) for line in (suite / JUDGE_FILE).read_text().splitlines()]
    assert sorted((k["task_id"], k["verdict"]) for k in kept) == [
        ("t1", "correct"), ("t2", "incorrect"), ("t3", "unsure")
    ]  # fmt: skip
    assert {k["reply"] for k in kept} == {"RIGHT", "**Wrong**", "RIGHT, I believe"}

    from mlflow import MlflowClient

    client: MlflowClient = client_for(suite)
    trace = client.get_trace(trace_id_of(trace_key(rows[0])))
    (judge,) = [a for a in trace.info.assessments if a.source.source_type == "LLM_JUDGE"]
    assert judge.value is True and judge.source.source_id == "judge-http"
    check = invoke(suite, "track", str(scored), "--scored", "--check")
    assert check.exit_code == 0, check.output

    again = invoke(suite, *args, "--judge", "judge-http")
    assert again.exit_code == 0, again.output
    assert stub.total_requests == 3  # everything was kept: no call
    assert statuses(scored)[:4] == ["correct", "correct", "incorrect", "unsure"]

    off = invoke(suite, *args)
    assert off.exit_code == 0, off.output
    assert statuses(scored)[:4] == ["unsure", "unsure", "unsure", "unsure"]

    # The other route to the same server is another judge: asked afresh.
    litellm = invoke(suite, *args, "--judge", "judge-litellm")
    assert litellm.exit_code == 0, litellm.output
    assert stub.total_requests == 6
    assert statuses(scored)[:3] == ["correct", "correct", "incorrect"]


def test_a_failing_judge_leaves_rows_unsure_and_keeps_nothing(
    suite: Path, stub: StubServer
) -> None:
    stub.set_config(fault_rate=1.0, fault_kinds=("401",))
    scored = suite / "s.jsonl"
    failed = invoke(
        suite, "score", "--results", str(suite / "t.jsonl"), "--output", str(scored),
        "--judge", "judge-http",
    )  # fmt: skip
    assert failed.exit_code == 0, failed.output
    assert "3 failed (left unsure)" in failed.output
    assert statuses(scored) == ["unsure", "unsure", "unsure", "unsure", "incorrect", "correct"]
    assert not (suite / JUDGE_FILE).exists()
