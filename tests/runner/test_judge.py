"""The judge is asked through the runner's model client: each unsure reply once, a provider
error leaves its row unsure (never wrong), an unknown model or a missing key stops at once."""

from __future__ import annotations

from pathlib import Path

import pytest

from llm_eval.config.loading import load_config
from llm_eval.errors import MissingApiKeyError, ProviderError, UsageError
from llm_eval.providers.scripted import ScriptedProvider
from llm_eval.runner.judge import ask_judge, rows_to_ask
from llm_eval.schemas import ModelConfig
from llm_eval.scoring import ScoreResult
from llm_eval.scoring.judged import PROMPT_DIGEST, apply_judgements, judge_key
from tests.support.catalog import add_models
from tests.support.rows import make_row


def unsure_row(task_id: str, response: str = "maybe 42", **fields: object):
    score = ScoreResult.unsure("hedge", method="maybe", extracted=None)
    return make_row(task_id=task_id, status="unsure", response=response, score=score, **fields)


def test_each_unsure_reply_is_asked_once_and_errors_stay_unsure(config_copy: Path) -> None:
    add_models(config_copy, {"judge": {"provider": "scripted", "model": "scripted/judge"}})
    config = load_config(config_copy)
    rows = [
        unsure_row("t1"),
        unsure_row("t1", model="other", epoch=2),  # the same reply: asked once
        unsure_row("t2"),
        unsure_row("t3"),
        make_row(task_id="t4"),  # sure: never asked
    ]
    asking = rows_to_ask(rows, {}, "judge")
    assert [row.task_id for row in asking] == ["t1", "t2", "t3"]
    providers: list[ScriptedProvider] = []

    def scripted(model: ModelConfig) -> ScriptedProvider:
        error = ProviderError("server_error", "boom", transient=False, status_code=500)
        per_task = {"t1": ["RIGHT"], "t2": [error], "t3": ["RIGHT, I think"]}
        providers.append(ScriptedProvider(model, per_task=per_task))
        return providers[-1]

    outcome = ask_judge(asking, "judge", config, scripted)
    assert sum(providers[0].calls.values()) == 3
    assert [(j.task_id, j.verdict) for j in outcome.judgements] == [
        ("t1", "correct"), ("t3", "unsure")
    ]  # fmt: skip
    assert outcome.failures == ["b/t2: server_error: boom"]
    first = outcome.judgements[0]
    assert (first.judge, first.prompt, first.reply) == ("judge", PROMPT_DIGEST, "RIGHT")
    kept = {judgement.judge_key: judgement for judgement in outcome.judgements}
    settled = apply_judgements(rows, kept, "judge")
    assert [row.status for row in settled] == ["correct", "correct", "unsure", "unsure", "correct"]
    assert rows_to_ask(settled, kept, "judge") == [rows[2]]  # only the failed one is asked again
    assert judge_key(rows[0], "judge") in kept


def test_an_unknown_judge_or_a_missing_key_stops_before_any_call(
    config_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    add_models(config_copy, {"keyed": {"provider": "openai_compatible", "model": "openai/x",
                                       "api_base": "http://127.0.0.1:9/v1",
                                       "api_key_env": "JUDGE_TEST_KEY"}})  # fmt: skip
    monkeypatch.delenv("JUDGE_TEST_KEY", raising=False)
    config = load_config(config_copy)
    with pytest.raises(UsageError, match="--judge: no model 'nobody'"):
        ask_judge([unsure_row("t1")], "nobody", config)
    with pytest.raises(MissingApiKeyError, match="JUDGE_TEST_KEY"):
        ask_judge([unsure_row("t1")], "keyed", config)
