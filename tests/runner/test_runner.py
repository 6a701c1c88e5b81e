"""EvaluationRunner with in-process providers: limits, retries, error rows, resume, cache."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from llm_eval.config.loading import load_config
from llm_eval.errors import ProviderError
from llm_eval.providers.base import ChatRequest
from llm_eval.providers.scripted import ScriptedProvider
from llm_eval.runner.runner import EvaluationRunner, TaskFilter
from llm_eval.runner.trace_io import read_rows
from llm_eval.schemas import ModelConfig


def scripted(
    failures: dict[str, list[ProviderError]] | None = None, delay: float = 0.0
) -> ScriptedProvider:
    """Answers correctly after a scripted number of failures per task."""
    model = ModelConfig(provider="scripted", model="scripted")
    return ScriptedProvider(model, per_task=failures, delay_s=delay)


def _runner(
    root: Path, provider: ScriptedProvider, output: Path, **kwargs: object
) -> EvaluationRunner:
    config = load_config(root)
    config.runner = config.runner.model_copy(update={"backoff_base_s": 0.0, "backoff_max_s": 0.0})
    return EvaluationRunner(
        config,
        ["mock-varied"],
        kwargs.pop("benchmarks", ["sample_math"]),  # type: ignore[arg-type]
        output,
        provider_factory=lambda _model: provider,
        use_cache=kwargs.pop("use_cache", False),  # type: ignore[arg-type]
        **kwargs,  # type: ignore[arg-type]
    )


def _transient(status: int = 503) -> ProviderError:
    return ProviderError(f"http_{status}", "server busy", transient=True, status_code=status)


def test_transient_errors_are_retried_and_permanent_ones_are_not(
    config_copy: Path, tmp_path: Path
) -> None:
    provider = scripted(
        {
            "math_001": [_transient(), _transient(429)],
            "math_002": [ProviderError("http_401", "bad key", transient=False, status_code=401)],
        }
    )
    out = tmp_path / "t.jsonl"
    asyncio.run(_runner(config_copy, provider, out).run())
    rows = {row.task_id: row for row in read_rows(out)}
    assert rows["math_001"].status == "correct" and rows["math_001"].attempts == 3
    assert rows["math_002"].status == "error"
    assert rows["math_002"].error is not None and rows["math_002"].error.kind == "http_401"
    assert provider.calls["math_002"] == 1  # permanent: never retried
    assert rows["math_002"].score is None  # an error row is not a wrong answer


def test_attempts_run_out_into_an_error_row(config_copy: Path, tmp_path: Path) -> None:
    provider = scripted({"math_003": [_transient() for _ in range(10)]})
    out = tmp_path / "t.jsonl"
    runner = _runner(config_copy, provider, out)
    asyncio.run(runner.run())
    row = next(r for r in read_rows(out) if r.task_id == "math_003")
    assert row.status == "error" and row.attempts == runner.config.runner.max_attempts
    assert provider.calls["math_003"] == runner.config.runner.max_attempts


def test_per_model_limit_bounds_concurrency(config_copy: Path, tmp_path: Path) -> None:
    provider = scripted(delay=0.05)
    runner = _runner(config_copy, provider, tmp_path / "t.jsonl")
    runner._per_model["mock-varied"] = asyncio.Semaphore(3)
    asyncio.run(runner.run())
    assert provider.peak == 3


def test_task_timeout_becomes_an_error_row(config_copy: Path, tmp_path: Path) -> None:
    provider = scripted(delay=1.0)
    runner = _runner(config_copy, provider, tmp_path / "t.jsonl", task_filter=TaskFilter(limit=2))
    runner.config.runner = runner.config.runner.model_copy(update={"task_timeout_s": 0.1})
    asyncio.run(runner.run())
    rows = read_rows(tmp_path / "t.jsonl")
    assert len(rows) == 2 and {r.error.kind for r in rows if r.error} == {"task_timeout"}


def test_filters_select_categories_and_limit(config_copy: Path, tmp_path: Path) -> None:
    provider = scripted()
    out = tmp_path / "t.jsonl"
    flt = TaskFilter(include=frozenset({"word_problem"}))
    asyncio.run(_runner(config_copy, provider, out, task_filter=flt).run())
    rows = read_rows(out)
    assert rows and {r.category for r in rows} == {"word_problem"}
    limited = _runner(config_copy, provider, out, task_filter=TaskFilter(limit=3), overwrite=True)
    asyncio.run(limited.run())
    assert len(read_rows(out)) == 3


def test_resume_keeps_finished_rows_and_reruns_errors_and_missing(
    config_copy: Path, tmp_path: Path
) -> None:
    out = tmp_path / "t.jsonl"
    first = scripted(
        {"math_002": [ProviderError("http_400", "no", transient=False, status_code=400)]}
    )
    asyncio.run(_runner(config_copy, first, out).run())
    lines = out.read_text().splitlines()
    kept = [line for line in lines if '"math_005"' not in line]
    out.write_text("\n".join(kept) + "\n" + kept[0][: len(kept[0]) // 2])  # torn tail
    second = scripted()
    asyncio.run(_runner(config_copy, second, out, resume=True).run())
    rows = read_rows(out, tolerate_torn_tail=False)
    assert sorted(r.task_id for r in rows) == [f"math_00{i}" for i in range(1, 9)]
    assert set(second.calls) == {"math_002", "math_005"}
    assert all(r.status == "correct" for r in rows)


def test_response_cache_replays_with_zero_calls(
    config_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LLM_EVAL_CACHE_DIR", str(tmp_path / "cache"))
    first = scripted()
    asyncio.run(_runner(config_copy, first, tmp_path / "a.jsonl", use_cache=True).run())
    second = scripted()
    runner = _runner(config_copy, second, tmp_path / "b.jsonl", use_cache=True)
    summary = asyncio.run(runner.run())
    assert sum(first.calls.values()) == 8 and sum(second.calls.values()) == 0
    assert summary.calls.cache_hits == 8
    assert [r.status for r in read_rows(tmp_path / "b.jsonl")] == ["correct"] * 8


def test_cache_key_changes_with_settings_and_epoch() -> None:
    from llm_eval.runner.cache import ResponseCache

    model = ModelConfig(provider="litellm", model="openai/x", api_base="http://127.0.0.1:1")
    base = ChatRequest("m", model, [{"role": "user", "content": "hi"}], None, 10, 5.0)
    warmer = ChatRequest(
        "m", model.model_copy(update={"temperature": 0.7}), base.messages, None, 10, 5.0
    )
    later = ChatRequest("m", model, base.messages, None, 10, 5.0, epoch=1)
    cache = ResponseCache(Path("unused"))
    keys = {cache.key(r) for r in (base, warmer, later)}
    assert len(keys) == 3


def test_error_messages_are_redacted(
    config_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-live-0123456789abcdef"
    monkeypatch.setenv("SOME_PROVIDER_API_KEY", secret)
    provider = scripted(
        {
            "math_001": [
                ProviderError("http_401", f"bad key {secret}", transient=False, status_code=401)
            ]
        }
    )
    out = tmp_path / "t.jsonl"
    asyncio.run(_runner(config_copy, provider, out).run())
    assert secret not in out.read_text()
    row = next(r for r in read_rows(out) if r.task_id == "math_001")
    assert row.error is not None and "[REDACTED]" in row.error.message


def test_rows_record_usage_and_calls(config_copy: Path, tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    asyncio.run(_runner(config_copy, scripted(), out, task_filter=TaskFilter(limit=1)).run())
    row = json.loads(out.read_text().splitlines()[0])
    assert row["usage"]["total_tokens"] == 12 and row["calls"][0]["attempts"] == 1
    assert row["messages"][-1]["role"] == "assistant"


def test_the_flaky_mock_misses_hard_language_items_most(config_copy: Path, tmp_path: Path) -> None:
    # Measured difficulties are mostly `easy`: give the copy a third of each level, so the
    # mock's dependence on difficulty is what is tested.
    path = config_copy / "data" / "language_understanding.jsonl"
    tasks = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for index, task in enumerate(tasks):
        task["difficulty"] = ("easy", "medium", "hard")[index % 3]
    path.write_text("".join(json.dumps(t, ensure_ascii=False) + "\n" for t in tasks), "utf-8")
    config = load_config(config_copy)
    output = tmp_path / "flaky.jsonl"
    runner = EvaluationRunner(
        config, ["mock-flaky"], ["language_understanding"], output, use_cache=False
    )
    asyncio.run(runner.run())
    difficulty = {
        json.loads(line)["id"]: json.loads(line)["difficulty"]
        for line in (config_copy / "data" / "language_understanding.jsonl").read_text().splitlines()
    }
    missed: dict[str, list[bool]] = {"easy": [], "medium": [], "hard": []}
    for row in read_rows(output):
        assert row.status != "error"
        missed[difficulty[row.task_id]].append(row.status != "correct")
    share = {level: sum(flags) / len(flags) for level, flags in missed.items()}
    assert share["easy"] < share["medium"] < share["hard"], share


def test_simulated_runs_are_byte_identical_and_in_plan_order(
    config_copy: Path, tmp_path: Path
) -> None:
    """Same simulated models, same suite: the same bytes, whatever order tasks finished in."""
    config = load_config(config_copy)
    outputs = [tmp_path / "first.jsonl", tmp_path / "second.jsonl"]
    for output in outputs:
        runner = EvaluationRunner(
            config,
            ["mock-flaky", "mock-varied"],
            ["sample_tools", "sample_math", "sample_multiturn"],
            output,
            use_cache=False,
        )
        asyncio.run(runner.run())
    first, second = (path.read_bytes() for path in outputs)
    assert first == second
    rows = read_rows(outputs[0])
    planned = [item.key for item in runner.plan()]
    assert [row.key for row in rows] == planned
    row = rows[0]
    assert row.run_id.startswith("simulated-mock-flaky-")
    assert row.started_at is not None and row.started_at.startswith("2000-01-01T00:00:00")
    assert all(record.duration_s is None for r in rows for record in r.tool_calls)
