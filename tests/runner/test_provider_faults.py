"""Both real routes (LiteLLM and direct) against the local stub: faults, retries, resume,
redaction. Every test runs once per route."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from llm_eval.config.loading import load_config
from llm_eval.runner.runner import EvaluationRunner, TaskFilter
from llm_eval.runner.trace_io import read_rows
from tests.conftest import REPO
from tests.support.openai_stub import StubServer, http_date, start_stub
from tests.support.suite import SEED_BENCHMARKS

SECRET = "sk-stub-secret-0123456789abcdefXYZ"
TRANSIENT = ("429", "500", "502", "503", "504", "drop", "malformed_json", "empty_choices", "slow")
PERMANENT = ("400", "401", "403", "404", "context_length")
ROUTES = ("litellm", "openai_compatible")

pytestmark = pytest.mark.slow  # real stub servers and CLI subprocesses


def add_stub_model(root: Path, stub: StubServer, provider: str = "litellm") -> None:
    """Add a `stub` model entry on `provider` (a real route) pointing at the stub server."""
    params = root / "configs" / "models.yaml"
    params.write_text(
        params.read_text(encoding="utf-8")
        + f"""
  stub:
    provider: {provider}
    model: openai/stub-model
    api_base: {stub.base_url}
    api_key_env: STUB_API_KEY
    label: Local stub
""",
        encoding="utf-8",
    )


@pytest.fixture(params=ROUTES)
def route(request: pytest.FixtureRequest) -> str:
    """The provider a test's stub model uses: each test runs on both routes."""
    return str(request.param)


@pytest.fixture()
def stub_root(config_copy: Path, monkeypatch: pytest.MonkeyPatch, route: str):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("STUB_API_KEY", SECRET)
    monkeypatch.setenv("LLM_EVAL_TRACKING", "0")
    with start_stub() as stub:
        add_stub_model(config_copy, stub, route)
        yield config_copy, stub


def _runner(root: Path, output: Path, benchmarks: list[str] | None = None, **runner: object):
    config = load_config(root)
    settings = {"backoff_base_s": 0.0, "backoff_max_s": 0.0, "cache": False, "global_limit": 32,
                "per_model_limit": 32, "request_timeout_s": 2.0, **runner}  # fmt: skip
    config.runner = config.runner.model_copy(update=settings)
    return EvaluationRunner(
        config, ["stub"], benchmarks or config.active_benchmarks(), output, use_cache=False
    )


def test_thirty_percent_transient_faults_leave_no_error_rows(stub_root, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root, stub = stub_root
    # Independent draws: a request may fail several times in a row, as on a real server.
    stub.set_config(fault_rate=0.3, fault_kinds=TRANSIENT, retry_after="0", slow_s=5.0, seed=3,
                    independent_faults=True)  # fmt: skip
    out = tmp_path / "t.jsonl"
    # The seed's eight benchmarks: every task type and flow, at a third of the suite's size.
    summary = asyncio.run(_runner(root, out, SEED_BENCHMARKS).run())
    rows = read_rows(out)
    assert len(rows) == 156
    assert {row.status for row in rows} <= {"correct", "incorrect", "unsure"}, [
        (row.task_id, row.error) for row in rows if row.status == "error"
    ]
    faulted = [r for r in stub.received if r.fault is not None]
    assert len(faulted) > 30  # the faults really happened...
    # ...and no hidden retries: every request the server saw is an attempt a row counts. An
    # attempt can time out before a loaded server reads it, so the rows may count more.
    assert stub.total_requests <= sum(row.attempts for row in rows)
    assert any(row.attempts > len(row.calls) for row in rows)
    assert summary.statuses["error"] == 0


def test_permanent_faults_make_error_rows_without_retry(stub_root, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root, stub = stub_root
    stub.set_config(fault_rate=0.3, fault_kinds=PERMANENT, seed=5)
    out = tmp_path / "t.jsonl"
    summary = asyncio.run(_runner(root, out, ["language_understanding", "sample_math"]).run())
    rows = read_rows(out)
    errors = [row for row in rows if row.status == "error"]
    faulted = [r for r in stub.received if r.fault is not None]
    assert errors and len(errors) == len(faulted) == summary.statuses["error"]
    assert all(row.attempts == 1 and row.score is None for row in errors)
    assert {row.error.kind for row in errors if row.error} <= {
        "http_400", "http_401", "http_403", "http_404", "context_length"
    }  # fmt: skip
    assert stub.total_requests == len(rows)  # nothing was retried


@pytest.mark.parametrize("form", ["seconds", "http-date"])
def test_retry_after_is_honoured(stub_root, tmp_path: Path, form: str) -> None:  # type: ignore[no-untyped-def]
    root, stub = stub_root
    # An HTTP date has whole seconds: two seconds ahead is at least one second away.
    retry_after = "1" if form == "seconds" else http_date(2.0)
    stub.set_config(fault_rate=1.0, fault_kinds=("429",), retry_after=retry_after)
    started = time.perf_counter()
    out = tmp_path / "t.jsonl"
    runner = _runner(root, out, ["sample_math"])
    runner.filter = TaskFilter(limit=1)
    asyncio.run(runner.run())
    assert time.perf_counter() - started >= 1.0
    assert read_rows(out)[0].status != "error" and stub.total_requests == 2


def test_echoed_api_key_never_reaches_traces_or_reports(stub_root, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root, stub = stub_root
    stub.set_config(fault_rate=1.0, fault_kinds=("401",), echo_api_key=True)
    out = tmp_path / "t.jsonl"
    asyncio.run(_runner(root, out, ["sample_math"]).run())
    assert any(SECRET in str(dict(r.headers)) for r in stub.received)  # it was sent and echoed
    assert SECRET not in out.read_text(encoding="utf-8")
    from llm_eval.reporting.markdown import render_report

    assert SECRET not in render_report(read_rows(out), title="t")


def test_sigkill_mid_run_then_resume_completes_without_duplicates(
    stub_root, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    root, stub = stub_root
    stub.set_config(latency_s=0.05)
    out = tmp_path / "run.jsonl"
    args = [sys.executable, "-m", "llm_eval.cli", "run", "--config-root", str(root), "--model",
            "stub", "--benchmark", "language_understanding", "--benchmark", "sample_math",
            "--global-limit", "4", "--no-cache", "--output", str(out)]  # fmt: skip
    env = {**os.environ, "LLM_EVAL_TRACKING": "0"}
    process = subprocess.Popen(
        args, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if out.exists() and len(out.read_bytes().splitlines()) >= 40:
            break
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    kept = len([line for line in out.read_text(encoding="utf-8").splitlines() if line.strip()])
    assert 40 <= kept < 116, "the kill did not land mid-run"
    stub.reset()
    resumed = subprocess.run([*args, "--resume"], cwd=REPO, env=env, capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    rows = read_rows(out, tolerate_torn_tail=False)
    keys = [row.key for row in rows]
    assert len(keys) == len(set(keys)) == 116
    finished_before = kept  # a torn tail line, if any, is not a finished row
    assert stub.total_requests <= 116 - finished_before + 1
    assert stub.total_requests >= 116 - finished_before


def test_a_dead_server_gives_connection_error_rows(
    config_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, route: str
) -> None:
    monkeypatch.setenv("STUB_API_KEY", SECRET)
    stub = start_stub()
    add_stub_model(config_copy, stub, route)
    stub.stop()
    out = tmp_path / "t.jsonl"
    runner = _runner(config_copy, out, ["sample_math"], max_attempts=2)
    runner.filter = TaskFilter(limit=2)
    asyncio.run(runner.run())
    rows = read_rows(out)
    assert [row.status for row in rows] == ["error", "error"]
    assert all(row.error and row.error.kind == "connection" and row.attempts == 2 for row in rows)
    assert SECRET not in json.dumps([row.model_dump() for row in rows])


def test_a_rate_limited_provider_gets_fewer_concurrent_requests(stub_root, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root, stub = stub_root
    stub.set_config(fault_rate=0.5, fault_kinds=("429",), retry_after="0", latency_s=0.02)
    runner = _runner(root, tmp_path / "t.jsonl", ["language_understanding"], global_limit=16)
    asyncio.run(runner.run())
    (client,) = runner.clients.values()
    limiter = client.limiter
    assert limiter.limit < limiter.ceiling  # halved on each 429, recovering only slowly
    assert all(row.status != "error" for row in read_rows(tmp_path / "t.jsonl"))


def test_echoed_api_key_never_reaches_mlflow_or_logs(stub_root, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root, stub = stub_root
    stub.set_config(fault_rate=0.5, fault_kinds=("401",), echo_api_key=True)
    out = tmp_path / "t.jsonl"
    env = {**os.environ, "LLM_EVAL_TRACKING": "1", "DVC_ROOT": str(root)}
    env.pop("MLFLOW_TRACKING_URI", None)
    result = subprocess.run(
        [sys.executable, "-m", "llm_eval.cli", "run", "--config-root", str(root),
         "--model", "stub", "--benchmark", "sample_math", "--no-cache",
         "--fail-on-error", "1", "--output", str(out)],  # fmt: skip
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    assert any(SECRET in str(dict(r.headers)) for r in stub.received)
    assert SECRET not in result.stdout + result.stderr
    store = root / "mlruns"
    files = [p for p in store.rglob("*") if p.is_file()]
    assert any(p.name == "mlflow.db" for p in files), "tracking wrote nothing"
    for path in [out, *files]:
        assert SECRET.encode() not in path.read_bytes(), path
