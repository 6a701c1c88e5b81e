"""One definition of what changes an answer: row settings, the resume check and the cache key
follow `ModelConfig.answer_settings()` plus the run's own answer settings; pacing, names and
prices change none of them. Run against the real runner and the local OpenAI-compatible stub.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from llm_eval.config.loading import AppConfig, load_config
from llm_eval.errors import UsageError
from llm_eval.providers.registry import is_simulated
from llm_eval.providers.scripted import ScriptedProvider
from llm_eval.reporting.markdown import render_report
from llm_eval.runner.runner import EvaluationRunner, TaskFilter
from llm_eval.runner.trace_io import read_rows
from llm_eval.schemas import ModelConfig
from tests.support.openai_stub import StubServer, start_stub


def test_answer_settings_leave_out_pacing_names_prices_and_the_key_variable() -> None:
    model = ModelConfig(
        provider="litellm", model="openai/x", api_base="http://127.0.0.1:1/v1", temperature=0.3,
        label="A", price_source="list", input_cost_per_mtok=1, output_cost_per_mtok=2,
        api_key_env="X_API_KEY", max_concurrency=3,
    )  # fmt: skip
    settings = model.answer_settings()
    assert settings["temperature"] == 0.3 and settings["api_base"] == "http://127.0.0.1:1/v1"
    left_out = {"label", "price_source", "input_cost_per_mtok", "output_cost_per_mtok",
                "api_key_env", "max_concurrency"}  # fmt: skip
    assert not left_out & set(settings)


def test_a_provider_that_reads_the_answer_is_simulated_in_rows_and_report(
    config_copy: Path, tmp_path: Path
) -> None:
    assert is_simulated(ModelConfig(provider="scripted", model="s"))
    assert not is_simulated(ModelConfig(provider="litellm", model="openai/x"))
    config = load_config(config_copy)
    config.models["scripted-one"] = ModelConfig(provider="scripted", model="s", label="Scripted")
    out = tmp_path / "t.jsonl"
    runner = EvaluationRunner(config, ["scripted-one"], ["sample_math"], out, use_cache=False,
                              task_filter=TaskFilter(limit=2))  # fmt: skip
    asyncio.run(runner.run())
    rows = read_rows(out)
    assert rows and all(row.simulated for row in rows)
    assert all(row.status == "correct" for row in rows)  # it replied with the expected answer
    assert "**Simulated results.** Scripted (simulated)" in render_report(rows, title="t")


def test_a_second_plain_run_into_a_finished_trace_is_refused(
    config_copy: Path, tmp_path: Path
) -> None:
    out = tmp_path / "t.jsonl"

    def run(**options: Any) -> None:
        provider = ScriptedProvider(ModelConfig(provider="scripted", model="s"))
        runner = EvaluationRunner(load_config(config_copy), ["mock-varied"], ["sample_math"], out,
                                  task_filter=TaskFilter(limit=2), use_cache=False,
                                  provider_factory=lambda _m: provider, **options)  # fmt: skip
        asyncio.run(runner.run())

    run()
    before = out.read_bytes()
    with pytest.raises(UsageError, match="already holds a run; pass --resume"):
        run()
    assert out.read_bytes() == before
    run(resume=True)
    run(overwrite=True)
    assert len(read_rows(out)) == 2


# --------------------------------------------------------------------------- against the stub


@pytest.fixture()
def stub_root(config_copy: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("LLM_EVAL_CACHE_DIR", str(config_copy / "cache"))
    with start_stub() as stub:
        yield config_copy, stub


def _stub_config(root: Path, stub: StubServer, **model: Any) -> AppConfig:
    config = load_config(root)
    config.models["stub"] = ModelConfig(
        provider="litellm", model="openai/stub-model", api_base=stub.base_url, **model
    )
    config.runner = config.runner.model_copy(update={"backoff_base_s": 0.0, "backoff_max_s": 0.0})
    return config


def _run(config: AppConfig, out: Path, *, resume: bool = False, cache: bool = True) -> None:
    runner = EvaluationRunner(config, ["stub"], ["sample_math"], out, resume=resume,
                              use_cache=cache, task_filter=TaskFilter(limit=3))  # fmt: skip
    asyncio.run(runner.run())


@pytest.mark.slow
def test_max_concurrency_blocks_no_resume_and_misses_no_cache(stub_root, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root, stub = stub_root
    _run(_stub_config(root, stub, max_concurrency=4), tmp_path / "a.jsonl")
    assert stub.total_requests == 3
    paced = _stub_config(root, stub, max_concurrency=1, label="renamed", input_cost_per_mtok=1.0,
                         output_cost_per_mtok=1.0)  # fmt: skip
    _run(paced, tmp_path / "a.jsonl", resume=True)  # not refused as "other settings"
    _run(paced, tmp_path / "b.jsonl")  # every request replayed from the cache
    assert stub.total_requests == 3
    assert [row.calls[0].cached for row in read_rows(tmp_path / "b.jsonl")] == [True] * 3
    warmer = _stub_config(root, stub, temperature=0.5)
    _run(warmer, tmp_path / "c.jsonl")  # a setting that changes answers is a new request
    assert stub.total_requests == 6


@pytest.mark.slow
def test_a_changed_max_response_chars_is_refused_on_resume(stub_root, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root, stub = stub_root
    out = tmp_path / "t.jsonl"
    _run(_stub_config(root, stub), out, cache=False)
    cut = _stub_config(root, stub)
    cut.runner = cut.runner.model_copy(update={"max_response_chars": 1})
    with pytest.raises(UsageError, match=r"stub\.max_response_chars: 1000000 -> 1"):
        _run(cut, out, resume=True, cache=False)
    assert len(read_rows(out)) == 3
    _run(cut, tmp_path / "cut.jsonl")  # the cache never replays a reply cut to another limit
    assert stub.total_requests == 6
    assert {row.response for row in read_rows(tmp_path / "cut.jsonl")} == {"4"}


@pytest.mark.slow
def test_a_changed_question_reruns_only_its_row_on_resume(stub_root, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root, stub = stub_root
    out = tmp_path / "t.jsonl"
    _run(_stub_config(root, stub), out, cache=False)
    tasks = root / "data" / "sample_math.jsonl"
    lines = tasks.read_text(encoding="utf-8").splitlines()
    lines[1] = lines[1].replace("What is 123 - 58?", "What is 124 - 58?")
    tasks.write_text("\n".join(lines) + "\n", encoding="utf-8")
    stub.reset()
    _run(_stub_config(root, stub), out, resume=True, cache=False)
    assert stub.total_requests == 1
    (request,) = stub.requests
    assert "124 - 58" in request["messages"][-1]["content"]
    rows = {row.task_id: row for row in read_rows(out)}
    assert len(rows) == 3 and "124 - 58" in str(rows["math_002"].answer_key().question)


@pytest.mark.slow
def test_a_lone_surrogate_in_a_reply_is_stored_escaped_and_scored(
    stub_root, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    root, stub = stub_root
    stub.set_config(answer_fn=lambda _body: "Final answer: 85 \ud83d")  # half an emoji
    out = tmp_path / "t.jsonl"
    _run(_stub_config(root, stub), out, cache=False)
    rows = read_rows(out)
    assert len(rows) == 3 and all(row.status != "error" for row in rows)
    assert rows[0].response == "Final answer: 85 \\ud83d" and rows[0].status == "correct"
