"""Spending caps hold against a real HTTP endpoint: calls in flight are reserved for, every
paid reply keeps its row, usage a provider misreports never refunds a cap, and the run record
adds up the spend of every invocation. The real CLI in a subprocess against the local stub."""

from __future__ import annotations

import itertools
import json
import os
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from llm_eval.runner.run_record import read_record
from llm_eval.runner.trace_io import read_rows
from tests.support.catalog import add_models
from tests.support.cli import llm_eval
from tests.support.openai_stub import Body, StubServer, start_stub

pytestmark = pytest.mark.slow  # CLI subprocesses against a stub server

SECRET = "sk-stub-secret-caps-0123456789"
PER_CALL_USD = 0.002
FIXED_USAGE: Body = {"prompt_tokens": 1000, "completion_tokens": 1000, "total_tokens": 2000}
"""What the stub reports for every call: $0.002 at $1 per million tokens each way."""


def stub_model(stub: StubServer) -> dict[str, Any]:
    return {
        "provider": "openai_compatible", "model": "openai/stub-model",
        "api_base": stub.base_url, "api_key_env": "STUB_API_KEY", "label": "Local stub",
        "input_cost_per_mtok": 1, "output_cost_per_mtok": 1,
    }  # fmt: skip


@pytest.fixture()
def stub_root(config_copy: Path) -> Iterator[tuple[Path, StubServer]]:
    with start_stub(latency_s=0.3, usage_fn=lambda _body: dict(FIXED_USAGE)) as stub:
        add_models(config_copy, {"stub": stub_model(stub)})
        yield config_copy, stub


def cli_env() -> dict[str, str]:
    return {**os.environ, "STUB_API_KEY": SECRET, "LLM_EVAL_TRACKING": "0"}


def run_cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return llm_eval(*args, "--config-root", str(root), cwd=root, env=cli_env())


def wide_run(out: Path, *extra: str) -> list[str]:
    """108 tasks, 64 in flight, nothing replayed from the cache."""
    return ["run", "--model", "stub", "--benchmark", "language_understanding",
            "--global-limit", "64", "--per-model-limit", "64", "--no-cache",
            "--output", str(out), *extra]  # fmt: skip


def stop_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.startswith("stopped")]
    assert len(lines) == 1, stderr
    return lines[0]


def test_a_cost_cap_with_64_in_flight_holds_and_keeps_every_paid_reply(
    stub_root: tuple[Path, StubServer], tmp_path: Path
) -> None:
    root, stub = stub_root
    out = tmp_path / "trace.jsonl"
    made = run_cli(root, *wide_run(out, "--max-cost", "0.01"))
    assert made.returncode == 4, made.stderr
    served = stub.status_counts[200]
    assert stub.total_requests == served  # no faults: every request was answered
    rows = read_rows(out)
    # Every reply the endpoint served (and charged for) is in the rows and the record.
    assert len(rows) == served
    assert all(row.status != "error" for row in rows)
    record = read_record(out)
    assert record is not None and record.caps is not None
    assert record.cost_usd == pytest.approx(served * PER_CALL_USD)
    assert record.total_tokens == served * 2000
    # The overshoot is at most the calls in flight when sending stopped, and is stated.
    in_flight = record.caps.calls_in_flight_at_cap
    assert served * PER_CALL_USD <= 0.01 + in_flight * PER_CALL_USD + 1e-9
    assert in_flight < 64
    assert record.caps.over_cost_usd == pytest.approx(max(served * PER_CALL_USD - 0.01, 0.0))
    assert record.caps.calls_cancelled == 0
    # The stop line and the record's stop say what was really spent, not the cap.
    line = stop_line(made.stderr)
    assert f"spent ${record.cost_usd:.4f}" in line and "--max-cost $0.01" in line
    assert record.stop is not None and f"spent ${record.cost_usd:.4f}" in record.stop.detail
    report = tmp_path / "report.md"
    made = run_cli(root, "report", "--results", str(out), "--output", str(report), "--no-charts")
    assert made.returncode == 0, made.stderr
    bottom = report.read_text(encoding="utf-8").split("## Bottom line")[1].split("\n## ")[0]
    assert f"spent ${record.cost_usd:.4f}" in bottom and "INCOMPLETE" in bottom


def test_a_token_cap_states_the_tokens_really_used(
    stub_root: tuple[Path, StubServer], tmp_path: Path
) -> None:
    root, stub = stub_root
    out = tmp_path / "trace.jsonl"
    made = run_cli(root, *wide_run(out, "--max-total-tokens", "5000"))
    assert made.returncode == 4, made.stderr
    served = stub.status_counts[200]
    record = read_record(out)
    assert record is not None and record.caps is not None
    assert len(read_rows(out)) == served and record.total_tokens == served * 2000
    assert served * 2000 <= 5000 + record.caps.calls_in_flight_at_cap * 2000
    assert f"{served * 2000:,} tokens" in stop_line(made.stderr)


def every_other(bad: Body | None) -> Any:
    """A usage function: the fixed usage, and `bad` on every second reply."""
    counter = itertools.count()
    return lambda _body: dict(FIXED_USAGE) if next(counter) % 2 == 0 else bad


def test_negative_usage_is_unknown_and_never_refunds_the_cap(
    stub_root: tuple[Path, StubServer], tmp_path: Path
) -> None:
    root, stub = stub_root
    stub.set_config(usage_fn=every_other({**FIXED_USAGE, "prompt_tokens": -1_000_000}))
    out = tmp_path / "trace.jsonl"
    made = run_cli(root, "run", "--model", "stub", "--benchmark", "language_understanding",
                   "--global-limit", "1", "--no-cache", "--max-cost", "1",
                   "--output", str(out))  # fmt: skip
    # The second reply's cost is unknown, so a cost-capped run cannot go on.
    assert made.returncode == 4, made.stderr
    assert "unknown" in stop_line(made.stderr)
    rows = read_rows(out)
    assert stub.total_requests == len(rows) == 2
    bad = rows[1]
    assert bad.usage.prompt_tokens is None and bad.usage.cost_usd is None
    record = read_record(out)
    assert record is not None and record.cost_usd == pytest.approx(PER_CALL_USD)
    assert record.total_tokens >= 0 and record.unknown_cost_calls == 1


@pytest.mark.parametrize(
    "usage",
    [None, {"prompt_tokens": 1000, "completion_tokens": 1000}],
    ids=["no usage object", "no total"],
)
def test_a_token_cap_with_unknown_usage_stops(
    stub_root: tuple[Path, StubServer], tmp_path: Path, usage: Body | None
) -> None:
    root, stub = stub_root
    stub.set_config(usage_fn=lambda _body: dict(usage) if usage else None)
    out = tmp_path / "trace.jsonl"
    made = run_cli(root, "run", "--model", "stub", "--benchmark", "sample_math",
                   "--global-limit", "1", "--no-cache", "--max-total-tokens", "100",
                   "--output", str(out))  # fmt: skip
    assert made.returncode == 4, made.stderr
    assert stub.total_requests == 1
    if usage is None:  # nothing to count: the cap cannot hold
        assert "unknown" in stop_line(made.stderr)
    else:  # the total is the sum of its parts
        assert "2,000 tokens" in stop_line(made.stderr)


def test_the_run_record_adds_up_the_spend_of_every_resume(
    stub_root: tuple[Path, StubServer], tmp_path: Path
) -> None:
    root, stub = stub_root
    out = tmp_path / "trace.jsonl"
    first = run_cli(root, "run", "--model", "stub", "--benchmark", "sample_math",
                    "--global-limit", "1", "--no-cache", "--max-cost", "0.0055",
                    "--output", str(out))  # fmt: skip
    assert first.returncode == 4, first.stderr
    record = read_record(out)
    assert record is not None and record.resume_command is not None
    assert record.cost_usd == pytest.approx(3 * PER_CALL_USD)
    argv = shlex.split(record.resume_command)
    resumed = llm_eval(*argv[1:], cwd=root, env=cli_env())
    assert resumed.returncode == 4, resumed.stderr
    again = read_record(out)
    assert again is not None
    assert stub.total_requests == len(read_rows(out)) == 6
    assert again.cost_usd == pytest.approx(6 * PER_CALL_USD)
    assert again.total_tokens == 6 * 2000


def test_a_reply_from_the_cache_keeps_its_latency_and_cost_and_says_so(
    stub_root: tuple[Path, StubServer], tmp_path: Path
) -> None:
    root, stub = stub_root  # the cache is the config copy's own .llm_eval_cache
    paid, replayed = tmp_path / "paid.jsonl", tmp_path / "replayed.jsonl"
    for out in (paid, replayed):
        made = run_cli(root, "run", "--model", "stub", "--benchmark", "sample_logic",
                       "--cache", "--output", str(out))  # fmt: skip
        assert made.returncode == 0, made.stderr
    assert stub.total_requests == 6  # the second run paid for nothing
    first = {row.key: row for row in read_rows(paid)}
    second = {row.key: row for row in read_rows(replayed)}
    assert first.keys() == second.keys()
    for key, row in second.items():
        original = first[key]
        assert row.from_cache and not original.from_cache
        assert row.calls[0].cached
        assert row.calls[0].latency_s == original.calls[0].latency_s > 0
        assert row.usage.cost_usd == original.usage.cost_usd == pytest.approx(PER_CALL_USD)
        assert row.latency_s is not None and row.latency_s >= original.calls[0].latency_s
    record = read_record(replayed)
    assert record is not None and record.cost_usd == 0.0  # nothing was paid again
    assert json.loads(replayed.read_text(encoding="utf-8").splitlines()[0])["from_cache"]


def test_a_complete_run_that_passed_its_cap_says_so_in_the_report(
    stub_root: tuple[Path, StubServer], tmp_path: Path
) -> None:
    root, _stub = stub_root
    out = tmp_path / "trace.jsonl"
    # Three tasks at $0.002 under a $0.005 cap: the third call is the plan's last, and it
    # takes the spend past the cap with nothing left to stop.
    made = run_cli(root, *wide_run(out, "--limit", "3", "--max-cost", "0.005"))
    assert made.returncode == 0, made.stderr
    record = read_record(out)
    assert record is not None and record.stop is None and record.caps is not None
    assert record.caps.over_cost_usd == pytest.approx(0.001)
    report = tmp_path / "report.md"
    made = run_cli(root, "report", "--results", str(out), "--output", str(report), "--no-charts")
    assert made.returncode == 0, made.stderr
    bottom = report.read_text(encoding="utf-8").split("## Bottom line")[1].split("\n## ")[0]
    assert "finished its plan but passed its cap ($0.0010 over --max-cost $0.005" in bottom
    assert "INCOMPLETE: the run" not in bottom
