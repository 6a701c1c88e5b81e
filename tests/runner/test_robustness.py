"""Nothing lost, nothing leaked: the runner's guarantees under misuse and hostile replies."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from llm_eval.config.loading import load_config
from llm_eval.errors import ConfigError, ProviderError, UsageError
from llm_eval.providers.base import ChatResponse, ToolCall
from llm_eval.providers.scripted import ScriptedProvider
from llm_eval.runner.runner import EvaluationRunner, TaskFilter
from llm_eval.runner.trace_io import exclusive_writer, read_rows
from llm_eval.schemas import ModelConfig
from llm_eval.scoring import SCORER_KINDS, AnswerKey, ScoreResult, register_scorer

SECRET = "plain-looking-value-4f7Qz"  # not key-shaped: only the environment says it is secret


def scripted(*outputs: Any, delay: float = 0.0, **per_task: list[Any]) -> ScriptedProvider:
    model = ModelConfig(provider="scripted", model="scripted")
    return ScriptedProvider(model, outputs, per_task=per_task or None, delay_s=delay)


def make_runner(
    root: Path, provider: ScriptedProvider, output: Path, *, limit: int = 2, **kwargs: Any
) -> EvaluationRunner:
    config = load_config(root)
    runner_settings = {"backoff_base_s": 0.0, "backoff_max_s": 0.0, **kwargs.pop("runner", {})}
    config.runner = config.runner.model_copy(update=runner_settings)
    return EvaluationRunner(
        config, ["mock-varied"], kwargs.pop("benchmarks", ["sample_math"]), output,
        task_filter=TaskFilter(limit=limit), provider_factory=lambda _model: provider,
        use_cache=kwargs.pop("use_cache", False), **kwargs,
    )  # fmt: skip


def test_a_second_writer_of_the_same_trace_is_refused(config_copy: Path, tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    with exclusive_writer(out), pytest.raises(UsageError, match="another llm-eval run"):
        asyncio.run(make_runner(config_copy, scripted(), out).run())
    asyncio.run(make_runner(config_copy, scripted(), out).run())  # free again afterwards
    assert len(read_rows(out)) == 2


def test_a_file_that_is_not_a_trace_is_never_truncated(config_copy: Path) -> None:
    params = config_copy / "params.yaml"
    before = params.read_bytes()
    with pytest.raises(UsageError, match="not a trace of llm-eval"):
        asyncio.run(make_runner(config_copy, scripted(), params).run())
    with pytest.raises(UsageError, match="not a trace file"):
        asyncio.run(make_runner(config_copy, scripted(), params, resume=True).run())
    assert params.read_bytes() == before
    with pytest.raises(UsageError, match="is a directory"):
        asyncio.run(make_runner(config_copy, scripted(), config_copy / "data").run())


def test_overwrite_replaces_a_file_that_is_not_a_trace(config_copy: Path, tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("not a trace\n")
    asyncio.run(make_runner(config_copy, scripted(), notes, overwrite=True).run())
    assert len(read_rows(notes)) == 2


def test_resume_refuses_rows_made_under_other_settings(config_copy: Path, tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    asyncio.run(make_runner(config_copy, scripted(), out, limit=1).run())
    params = config_copy / "configs" / "models.yaml"
    params.write_text(
        params.read_text(encoding="utf-8").replace(
            "    temperature: 0.0  #", "    temperature: 0.3  #"
        ),
        encoding="utf-8",
    )
    before = out.read_bytes()
    with pytest.raises(UsageError, match=r"mock-varied\.temperature: 0\.0 -> 0\.3"):
        asyncio.run(make_runner(config_copy, scripted(), out, resume=True).run())
    assert out.read_bytes() == before
    resumed = make_runner(config_copy, scripted(), out, resume=True, allow_changed_settings=True)
    asyncio.run(resumed.run())
    assert len(read_rows(out)) == 2


def test_a_torn_multibyte_tail_is_dropped_and_a_corrupt_middle_line_named(tmp_path: Path) -> None:
    good = tmp_path / "good.jsonl"
    asyncio.run(make_runner(Path(__file__).parents[2], scripted(), good, limit=3).run())
    data = good.read_bytes()
    torn = tmp_path / "torn.jsonl"
    cut = data.rindex(b"Final") + 3
    torn.write_bytes(data[:cut] + "Μ".encode()[:1])  # cut inside a two-byte character
    assert len(read_rows(torn)) == 2
    middle = tmp_path / "middle.jsonl"
    lines = data.split(b"\n")
    lines[1] = lines[1][:40] + b"\xff\xfe" + lines[1][40:]
    middle.write_bytes(b"\n".join(lines))
    with pytest.raises(ConfigError, match=f"{middle}:2: not valid UTF-8"):
        read_rows(middle)


def test_each_attempt_has_a_deadline_however_slowly_the_reply_comes(
    config_copy: Path, tmp_path: Path
) -> None:
    out = tmp_path / "t.jsonl"
    slow = scripted(delay=5.0)
    runner = make_runner(config_copy, slow, out, limit=1,
                         runner={"request_timeout_s": 0.2, "max_attempts": 2})  # fmt: skip
    asyncio.run(runner.run())
    (row,) = read_rows(out)
    assert row.status == "error" and row.error is not None and row.error.kind == "timeout"
    assert row.attempts == 2 and row.latency_s is not None and row.latency_s < 2


def test_a_task_timeout_records_the_attempts_it_started(config_copy: Path, tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    runner = make_runner(config_copy, scripted(delay=5.0), out, limit=1,
                         runner={"task_timeout_s": 0.3})  # fmt: skip
    asyncio.run(runner.run())
    (row,) = read_rows(out)
    assert row.error is not None and row.error.kind == "task_timeout"
    assert row.attempts == 1 and row.error.attempts == 1


def test_a_huge_reply_is_cut_and_marked(config_copy: Path, tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    runner = make_runner(config_copy, scripted("x" * 50_000), out, limit=1,
                         runner={"max_response_chars": 1000})  # fmt: skip
    asyncio.run(runner.run())
    (row,) = read_rows(out)
    assert row.response is not None and len(row.response) == 1000
    assert row.calls[0].truncated


def test_an_echoed_secret_is_redacted_from_every_stored_field(
    config_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LEAKY_PROVIDER_TOKEN", SECRET)
    monkeypatch.setenv("LLM_EVAL_CACHE_DIR", str(tmp_path / "cache"))
    arguments = json.dumps({"code": f"print('{SECRET}'[:3] + '{SECRET}'[3:])"})
    echo = ChatResponse(content=f"key {SECRET}", reasoning=f"thinking {SECRET}",
                        tool_calls=[ToolCall("c1", "python_exec", arguments)])  # fmt: skip
    provider = scripted(echo, f"Final answer: {SECRET}")
    out = tmp_path / "t.jsonl"
    runner = make_runner(config_copy, provider, out, limit=1, benchmarks=["sample_tools"],
                         use_cache=True)  # fmt: skip
    asyncio.run(runner.run())
    written = [out, *(tmp_path / "cache").rglob("*.json")]
    assert len(written) >= 2
    for path in written:
        assert SECRET not in path.read_text(encoding="utf-8"), path


def test_a_scorer_that_raises_becomes_a_scoring_error_row(
    config_copy: Path, tmp_path: Path
) -> None:
    @register_scorer("explodes")
    def explodes(response: str, key: AnswerKey) -> ScoreResult:
        raise ValueError("Exceeds the limit (4300 digits) for integer string conversion")

    bench = config_copy / "configs" / "benchmarks.yaml"
    text = bench.read_text(encoding="utf-8")
    bench.write_text(text.replace("scorer: numeric", "scorer: explodes", 1), encoding="utf-8")
    out = tmp_path / "t.jsonl"
    try:
        asyncio.run(make_runner(config_copy, scripted(), out, limit=3).run())
    finally:
        del SCORER_KINDS["explodes"]
    rows = read_rows(out)
    assert len(rows) == 3
    assert all(r.status == "error" and r.error and r.error.kind == "scoring_error" for r in rows)


def test_permanent_errors_name_the_first_error_of_each_model(
    config_copy: Path, tmp_path: Path
) -> None:
    denied = ProviderError("http_401", "invalid key", transient=False, status_code=401)
    runner = make_runner(config_copy, scripted(denied, denied), tmp_path / "t.jsonl")
    summary = asyncio.run(runner.run())
    assert summary.first_errors["mock-varied"].kind == "http_401"


def test_a_huge_number_and_a_pathological_regex_leave_every_row_written(
    config_copy: Path, tmp_path: Path
) -> None:
    path = config_copy / "data" / "sample_logic.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[0] = lines[0].replace('"answer":', '"answer_regex": "^(a+)+$", "answer":', 1)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    replies = ["a" * 40 + "b", "Final answer: " + "9" * 5000]
    out = tmp_path / "t.jsonl"
    runner = make_runner(config_copy, scripted(*replies), out, limit=6,
                         benchmarks=["sample_logic"])  # fmt: skip
    asyncio.run(runner.run())
    rows = read_rows(out)
    assert len(rows) == 6 and all(row.status != "error" for row in rows)
    hostile = [
        row for row in rows if (row.response or "").startswith(("aaaa", "Final answer: 999"))
    ]
    assert len(hostile) == 2 and all(row.status == "incorrect" for row in hostile)
