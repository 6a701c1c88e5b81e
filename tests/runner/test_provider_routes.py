"""The two routes to an OpenAI-compatible server write the same rows: LiteLLM and direct.

The same suite runs through `litellm` and `openai_compatible` against one stub server (with
reasoning, tool calls, transient and permanent faults), and the trace rows are compared field
by field; only timing, the run id and the provider's name may differ.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from llm_eval.config.loading import load_config
from llm_eval.runner.runner import EvaluationRunner
from llm_eval.runner.trace_io import read_rows
from llm_eval.schemas import TraceRow
from tests.conftest import REPO
from tests.support.openai_stub import StubServer, start_stub
from tests.support.suite import SEED_BENCHMARKS

SECRET = "sk-stub-secret-0123456789abcdefXYZ"
ROUTES = ("litellm", "openai_compatible")
FAULTS = ("429", "500", "503", "drop", "malformed_json", "empty_choices", "401", "404",
          "context_length")  # fmt: skip

pytestmark = pytest.mark.slow  # real stub servers and, for one test, a CLI subprocess

MARK = "\n  # route under test\n"
TIMING = {"run_id", "latency_s", "started_at", "finished_at"}
CALL_TIMING = {"latency_s", "queue_s", "started_at"}


def stub_entry(stub: StubServer, provider: str) -> str:
    """A configs/models.yaml entry `stub` on `provider`, priced so that costs are compared too."""
    return f"""
  stub:
    provider: {provider}
    model: openai/stub-model
    api_base: {stub.base_url}
    api_key_env: STUB_API_KEY
    label: Local stub
    temperature: 0.0
    input_cost_per_mtok: 0.5
    output_cost_per_mtok: 1.5
"""


def set_route(root: Path, stub: StubServer, provider: str) -> None:
    """Point the `stub` entry of the copy's configs/models.yaml (`models:` is its only mapping)
    at `provider`."""
    params = root / "configs" / "models.yaml"
    original = params.read_text(encoding="utf-8").split(MARK)[0]
    params.write_text(original + MARK + stub_entry(stub, provider), encoding="utf-8")


@pytest.fixture()
def stub_root(config_copy: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("STUB_API_KEY", SECRET)
    monkeypatch.setenv("LLM_EVAL_TRACKING", "0")
    with start_stub(reasoning=True) as stub:
        yield config_copy, stub


def run_route(
    root: Path, stub: StubServer, provider: str, output: Path, benchmarks: list[str], **kw: Any
) -> EvaluationRunner:
    set_route(root, stub, provider)
    config = load_config(root)
    settings = {"backoff_base_s": 0.0, "backoff_max_s": 0.0, "global_limit": 32,
                "per_model_limit": 32, "request_timeout_s": 5.0}  # fmt: skip
    config.runner = config.runner.model_copy(update=settings)
    runner = EvaluationRunner(config, ["stub"], benchmarks, output, **kw)
    asyncio.run(runner.run())
    return runner


def comparable(row: TraceRow) -> dict[str, Any]:
    """The row without what differs between two runs of one route: timing and the run id;
    the provider's name is checked apart; error messages carry the client's wording."""
    data = row.model_dump(exclude=TIMING | {"provider"})
    data["settings"].pop("provider")
    for call in data["calls"]:
        for key in CALL_TIMING:
            call.pop(key)
    for call in data["tool_calls"]:
        call.pop("duration_s")
        call.pop("budget_wait_s")  # waits for the sandboxes' memory budget are timing too
    if data["error"] is not None:
        assert data["error"].pop("message")
    return data


def test_the_same_suite_gives_the_same_rows_on_both_routes(stub_root, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root, stub = stub_root
    # Deterministic per request body: each route meets the same faults on the same requests.
    stub.set_config(fault_rate=0.25, fault_kinds=FAULTS, retry_after="0", seed=9)
    rows: dict[str, dict[tuple[str, str, int], TraceRow]] = {}
    requests: dict[str, list[Any]] = {}
    for provider in ROUTES:
        stub.reset()
        out = tmp_path / f"{provider}.jsonl"
        run_route(root, stub, provider, out, SEED_BENCHMARKS, use_cache=False)
        rows[provider] = {row.key: row for row in read_rows(out)}
        requests[provider] = sorted(stub.requests, key=repr)
    litellm_rows, direct_rows = rows["litellm"], rows["openai_compatible"]
    assert len(litellm_rows) == 156 and litellm_rows.keys() == direct_rows.keys()
    assert {row.provider for row in direct_rows.values()} == {"openai_compatible"}
    for key, row in litellm_rows.items():
        assert comparable(direct_rows[key]) == comparable(row), key
    # The rows cover what they are meant to: errors of several kinds, retries, reasoning,
    # tool calls, reasoning tokens and costs.
    direct = list(direct_rows.values())
    assert len({row.error.kind for row in direct if row.error}) >= 3
    assert any(row.attempts > len(row.calls) for row in direct)
    assert any(row.reasoning for row in direct) and any(row.tool_calls for row in direct)
    assert all(row.usage.reasoning_tokens for row in direct if row.status != "error")
    assert all(row.usage.cost_source == "configured" for row in direct if row.status != "error")
    # Both routes sent the same bodies (LiteLLM and the SDK order keys differently).
    assert requests["litellm"] == requests["openai_compatible"]


def test_a_reply_cached_on_one_route_serves_the_other(stub_root, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root, stub = stub_root
    run_route(root, stub, "litellm", tmp_path / "a.jsonl", ["sample_math"], use_cache=True)
    first = stub.total_requests
    runner = run_route(
        root, stub, "openai_compatible", tmp_path / "b.jsonl", ["sample_math"], use_cache=True
    )
    assert first == 8 and stub.total_requests == first  # nothing new was sent
    assert runner.summary.calls.cache_hits == 8


def test_a_trace_of_one_route_resumes_on_the_other(stub_root, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root, stub = stub_root
    out = tmp_path / "t.jsonl"
    run_route(root, stub, "litellm", out, ["sample_math"], use_cache=False)
    stub.reset()
    benchmarks = ["sample_math", "sample_logic"]
    run_route(root, stub, "openai_compatible", out, benchmarks, use_cache=False, resume=True)
    assert stub.total_requests == 6  # only sample_logic's tasks
    providers = [row.provider for row in read_rows(out)]
    assert providers.count("litellm") == 8 and providers.count("openai_compatible") == 6


def test_a_run_on_the_direct_route_never_imports_litellm(stub_root, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root, stub = stub_root
    set_route(root, stub, "openai_compatible")
    out = tmp_path / "t.jsonl"
    argv = ["llm-eval", "run", "--config-root", str(root), "--model", "stub", "--benchmark",
            "sample_math", "--no-cache", "--output", str(out)]  # fmt: skip
    program = (
        "import sys\n"
        "from llm_eval.cli import main\n"
        f"sys.argv = {argv!r}\n"
        "try:\n    main()\nexcept SystemExit as exit:\n    assert not exit.code, exit.code\n"
        "print('litellm loaded:', 'litellm' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", program], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "litellm loaded: False" in result.stdout, result.stdout[-2000:]
    assert len(read_rows(out)) == 8 and stub.total_requests == 8


CLIENT_HEADERS = {"host", "content-length", "user-agent", "accept-encoding", "connection"}
"""Headers each HTTP client sets about itself: its name and version (LiteLLM's openai SDK adds
its `x-stainless-*` family), how it frames and compresses bytes. No setting decides them."""


def settings_headers(headers: Any) -> dict[str, str]:
    return {
        name.lower(): value
        for name, value in headers.items()
        if name.lower() not in CLIENT_HEADERS and not name.lower().startswith("x-stainless")
    }


def test_both_routes_send_the_same_request_for_the_same_settings(stub_root, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root, stub = stub_root
    settings = """    reasoning_effort: high
    extra_params:
      top_p: 0.5
      extra_headers:
        X-Team: evals
        X-Title: llm-eval
      extra_body:
        min_p: 0.1
"""
    received: dict[str, list[Any]] = {}
    for provider in ROUTES:
        stub.reset()
        set_route(root, stub, provider)
        models = root / "configs" / "models.yaml"
        models.write_text(models.read_text(encoding="utf-8") + settings, encoding="utf-8")
        config = load_config(root)
        runner = EvaluationRunner(
            config, ["stub"], ["sample_tools"], tmp_path / f"{provider}.jsonl", use_cache=False
        )
        asyncio.run(runner.run())
        received[provider] = sorted(stub.received, key=lambda r: repr(r.body))
    litellm, direct = received["litellm"], received["openai_compatible"]
    assert len(direct) == len(litellm) >= 4  # two tool tasks, two turns each
    for sent_direct, sent_litellm in zip(direct, litellm, strict=True):
        assert sent_direct.path == sent_litellm.path
        assert sent_direct.body == sent_litellm.body
        assert settings_headers(sent_direct.headers) == settings_headers(sent_litellm.headers)
    first = direct[0]
    assert first.headers["X-Team"] == "evals" and "extra_headers" not in (first.body or {})
    assert first.body is not None and first.body["min_p"] == 0.1
    assert first.headers["Authorization"] == f"Bearer {SECRET}"
