"""Stopping a run (SIGTERM, a spending cap) and rerunning part of it, through the real CLI
against the local OpenAI-compatible stub: a real subprocess, real HTTP, real signals."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from llm_eval.runner.run_record import read_record
from llm_eval.runner.trace_io import read_rows
from tests.support.catalog import add_models
from tests.support.cli import llm_eval
from tests.support.openai_stub import Body, StubServer, default_answer, start_stub

SECRET = "sk-stub-secret-stop-0123456789"

pytestmark = pytest.mark.slow  # CLI subprocesses against a stub server


def priced_stub_model(stub: StubServer) -> dict[str, Any]:
    """A priced `stub` model (a real LiteLLM route) pointing at the stub server."""
    return {
        "provider": "litellm", "model": "openai/stub-model", "api_base": stub.base_url,
        "api_key_env": "STUB_API_KEY", "label": "Local stub",
        "input_cost_per_mtok": 1000, "output_cost_per_mtok": 1000,
    }  # fmt: skip


@pytest.fixture()
def stub_root(config_copy: Path) -> Iterator[tuple[Path, StubServer]]:
    with start_stub() as stub:
        add_models(config_copy, {"stub": priced_stub_model(stub)})
        yield config_copy, stub


def cli_env() -> dict[str, str]:
    return {**os.environ, "STUB_API_KEY": SECRET, "LLM_EVAL_TRACKING": "0"}


def run_cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return llm_eval(*args, "--config-root", str(root), cwd=root, env=cli_env())


def run_printed(command: str, root: Path) -> subprocess.CompletedProcess[str]:
    """Run a command line the CLI printed, verbatim (`llm-eval` is this interpreter's)."""
    argv = shlex.split(command)
    assert argv[0] == "llm-eval"
    return llm_eval(*argv[1:], cwd=root, env=cli_env())


def answers_by_question(root: Path, benchmark: str) -> dict[str, str]:
    lines = (root / "data" / f"{benchmark}.jsonl").read_text(encoding="utf-8").splitlines()
    tasks = [json.loads(line) for line in lines if line.strip()]
    return {task["question"]: task["answer"] for task in tasks}


def knowing(answers: dict[str, str]):  # type: ignore[no-untyped-def]
    """A stub answer function that answers every known question right."""

    def answer(body: Body) -> str:
        text = json.dumps(body.get("messages", []), ensure_ascii=False)
        for question, right in answers.items():
            if json.dumps(question, ensure_ascii=False)[1:-1] in text:
                return right
        return default_answer(body)

    return answer


def keys_of(path: Path) -> list[tuple[str, str, str, int]]:
    return [row.key for row in read_rows(path)]


def test_sigterm_stops_cleanly_and_the_printed_resume_completes(
    stub_root: tuple[Path, StubServer], tmp_path: Path
) -> None:
    root, stub = stub_root
    stub.set_config(latency_s=0.3)
    out = tmp_path / "trace.jsonl"
    args = ["run", "--model", "stub", "--benchmark", "sample_logic", "--benchmark",
            "sample_math", "--global-limit", "2", "--per-model-limit", "2", "--no-cache",
            "--output", str(out), "--config-root", str(root)]  # fmt: skip
    process = subprocess.Popen(
        [sys.executable, "-m", "llm_eval.cli", *args],
        cwd=root, env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 240
    while not (out.exists() and out.read_text(encoding="utf-8").count("\n") >= 2):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "no rows were written"
        time.sleep(0.05)
    process.send_signal(signal.SIGTERM)
    _stdout, stderr = process.communicate(timeout=120)

    assert process.returncode == 143, stderr
    assert "Traceback" not in stderr
    stop_lines = [line for line in stderr.splitlines() if line.startswith("stopped by SIGTERM")]
    assert len(stop_lines) == 1, stderr
    rows = read_rows(out, tolerate_torn_tail=False)  # every written row is whole
    done, planned = len(rows), 6 + 8
    assert 2 <= done < planned
    assert f"{done} of {planned} rows done, {planned - done} missing" in stop_lines[0]
    record = read_record(out)
    assert record is not None and record.status == "stopped"
    assert record.stop is not None and record.stop.detail == "SIGTERM"
    assert record.planned == {"stub": {"sample_logic": 6, "sample_math": 8}}
    # The calls cut off in flight were sent and may be charged: the record counts them.
    assert stub.total_requests <= done + record.calls_cancelled
    assert record.calls_cancelled >= 1

    # The report counts what is missing from the plan, including the benchmark the run
    # never reached, and its bottom line says the run is incomplete and why.
    report = tmp_path / "report.md"
    made = run_cli(root, "report", "--results", str(out), "--output", str(report), "--no-charts")
    assert made.returncode == 0, made.stderr
    text = report.read_text(encoding="utf-8")
    bottom = text.split("## Bottom line")[1].split("\n## ")[0]
    assert "INCOMPLETE" in bottom and "stopped by SIGTERM" in bottom
    assert f"{done} of {planned} rows done" in bottom
    missing_math = 8 - sum(r.benchmark == "sample_math" for r in rows)
    assert missing_math > 0  # the second benchmark was not (fully) reached
    coverage = text.split("## Errors and coverage")[1].split("\n## ")[0]
    assert f"sample_math: {missing_math}" in coverage and "**INCOMPLETE**" in coverage

    resumed = run_printed(stop_lines[0].split("resume with: ")[1], root)
    assert resumed.returncode == 0, resumed.stderr
    keys = keys_of(out)
    assert len(keys) == len(set(keys)) == planned
    completed = read_record(out)
    assert completed is not None and completed.status == "complete"


def test_a_token_cap_stops_the_run_with_exit_4_and_says_why(
    stub_root: tuple[Path, StubServer], tmp_path: Path
) -> None:
    root, stub = stub_root
    out = tmp_path / "trace.jsonl"
    made = run_cli(root, "run", "--model", "stub", "--benchmark", "language_understanding",
                   "--global-limit", "2", "--per-model-limit", "2", "--no-cache",
                   "--max-total-tokens", "600", "--output", str(out))  # fmt: skip
    assert made.returncode == 4, made.stderr
    assert "stopped at the budget:" in made.stderr and "--max-total-tokens 600" in made.stderr
    rows = read_rows(out)
    assert 0 < len(rows) < 108
    record = read_record(out)
    assert record is not None and record.stop is not None and record.stop.kind == "budget"
    assert record.total_tokens >= 600
    # Nothing new started once the cap was reached: at most the two requests in flight
    # were cancelled without a row.
    assert len(rows) <= stub.total_requests <= len(rows) + 2
    assert "--max-total-tokens 600" in (record.resume_command or "")


def test_a_cost_cap_counts_configured_prices(
    stub_root: tuple[Path, StubServer], tmp_path: Path
) -> None:
    root, _stub = stub_root
    out = tmp_path / "trace.jsonl"
    made = run_cli(root, "run", "--model", "stub", "--benchmark", "sample_math",
                   "--global-limit", "1", "--no-cache", "--max-cost", "0.2",
                   "--output", str(out))  # fmt: skip
    assert made.returncode == 4, made.stderr
    assert "reached --max-cost $0.2" in made.stderr
    rows = read_rows(out)
    spent = sum(row.usage.cost_usd or 0 for row in rows)
    assert spent >= 0.2 and len(rows) < 8
    # One request at a time: the run stops right after the call that reached the cap.
    assert spent - (rows[-1].usage.cost_usd or 0) < 0.2


def test_only_wrong_reruns_exactly_the_wrong_rows_into_the_same_file(
    stub_root: tuple[Path, StubServer], tmp_path: Path
) -> None:
    root, stub = stub_root
    trace, scored = tmp_path / "trace.jsonl", tmp_path / "scored.jsonl"
    answers = answers_by_question(root, "sample_math")
    stub.set_config(answer_fn=knowing(dict(list(answers.items())[:5])))  # three wrong
    first = run_cli(root, "run", "--model", "stub", "--benchmark", "sample_math", "--no-cache",
                    "--output", str(trace))  # fmt: skip
    assert first.returncode == 0, first.stderr
    assert run_cli(root, "score", "--results", str(trace), "--output", str(scored)).returncode == 0
    before = {row.key: row for row in read_rows(scored)}
    wrong = {key for key, row in before.items() if row.status == "incorrect"}
    assert len(wrong) == 3
    right_lines = [line for line in trace.read_text(encoding="utf-8").splitlines()
                   if '"status":"correct"' in line]  # fmt: skip

    stub.reset()
    stub.set_config(answer_fn=knowing(answers))
    rerun = run_cli(root, "run", "--model", "stub", "--benchmark", "sample_math",
                    "--only-wrong", str(scored), "--output", str(trace))  # fmt: skip
    assert rerun.returncode == 0, rerun.stderr
    assert stub.total_requests == len(wrong)  # only the wrong rows ran (no cache replay)
    after = read_rows(trace)
    assert len(after) == len(before) == len({row.key for row in after})
    assert all(row.status == "correct" for row in after)
    text = trace.read_text(encoding="utf-8")
    assert all(line in text for line in right_lines)  # the right rows were left as they were


def scored_with_three_wrong(root: Path, stub: StubServer, tmp_path: Path) -> tuple[Path, Path]:
    """Run sample_math against a stub that knows five of its answers (three rows wrong),
    score the trace, then let the stub know every answer; (trace, scored file)."""
    trace, scored = tmp_path / "traces" / "stub.jsonl", tmp_path / "scored" / "stub.jsonl"
    answers = answers_by_question(root, "sample_math")
    stub.set_config(answer_fn=knowing(dict(list(answers.items())[:5])))  # three wrong
    assert run_cli(root, "run", "--model", "stub", "--benchmark", "sample_math", "--no-cache",
                   "--output", str(trace)).returncode == 0  # fmt: skip
    assert run_cli(root, "score", "--results", str(trace), "--output", str(scored)).returncode == 0
    stub.reset()
    stub.set_config(answer_fn=knowing(answers))
    return trace, scored


def test_only_wrong_reruns_into_the_trace_the_scored_rows_came_from_and_says_so(
    stub_root: tuple[Path, StubServer], tmp_path: Path
) -> None:
    root, stub = stub_root
    trace, scored = scored_with_three_wrong(root, stub, tmp_path)
    scored_bytes = scored.read_bytes()
    rerun = run_cli(root, "run", "--model", "stub", "--benchmark", "sample_math",
                    "--only-wrong", str(scored))  # fmt: skip
    assert rerun.returncode == 0, rerun.stderr
    assert f"rerunning 3 wrong row(s) of {scored} into {trace}" in rerun.stdout + rerun.stderr
    assert stub.total_requests == 3
    assert all(row.status == "correct" for row in read_rows(trace))
    assert scored.read_bytes() == scored_bytes  # the scored file is `score`'s, left alone


def test_only_wrong_into_a_new_output_copies_the_trace_then_reruns_the_wrong_rows(
    stub_root: tuple[Path, StubServer], tmp_path: Path
) -> None:
    root, stub = stub_root
    trace, scored = scored_with_three_wrong(root, stub, tmp_path)
    rerun_trace = tmp_path / "reruns" / "stub.jsonl"
    trace_bytes = trace.read_bytes()
    rerun = run_cli(root, "run", "--model", "stub", "--benchmark", "sample_math",
                    "--only-wrong", str(scored), "--output", str(rerun_trace))  # fmt: skip
    assert rerun.returncode == 0, rerun.stderr
    assert stub.total_requests == 3
    assert trace.read_bytes() == trace_bytes  # the source trace is left as it was
    rows = read_rows(rerun_trace)
    assert len(rows) == len(read_rows(trace)) and all(row.status == "correct" for row in rows)
    record = read_record(rerun_trace)
    assert record is not None and record.trace == str(rerun_trace)


def test_only_wrong_without_a_record_naming_the_trace_asks_for_output(
    stub_root: tuple[Path, StubServer], tmp_path: Path
) -> None:
    root, stub = stub_root
    trace, scored = tmp_path / "trace.jsonl", tmp_path / "scored.jsonl"
    assert run_cli(root, "run", "--model", "stub", "--benchmark", "sample_logic", "--no-cache",
                   "--output", str(trace)).returncode == 0  # fmt: skip
    assert run_cli(root, "score", "--results", str(trace), "--output", str(scored)).returncode == 0
    Path(f"{scored}.run.json").unlink()
    scored_bytes = scored.read_bytes()
    refused = run_cli(root, "run", "--model", "stub", "--benchmark", "sample_logic",
                      "--only-wrong", str(scored))  # fmt: skip
    assert refused.returncode == 2
    assert f"--only-wrong: no run record beside {scored} names the trace" in refused.stderr
    assert "--output" in refused.stderr and "Traceback" not in refused.stderr
    assert scored.read_bytes() == scored_bytes


def test_task_id_reruns_one_task_and_an_unknown_id_is_refused(
    stub_root: tuple[Path, StubServer], tmp_path: Path
) -> None:
    root, stub = stub_root
    trace = tmp_path / "trace.jsonl"
    assert run_cli(root, "run", "--model", "stub", "--benchmark", "sample_logic", "--no-cache",
                   "--output", str(trace)).returncode == 0  # fmt: skip
    before = keys_of(trace)
    stub.reset()
    again = run_cli(root, "run", "--model", "stub", "--benchmark", "sample_logic",
                    "--task-id", before[2][2], "--output", str(trace))  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert stub.total_requests == 1
    after = keys_of(trace)
    assert sorted(after) == sorted(before) and len(after) == len(set(after))

    unknown = run_cli(root, "run", "--model", "stub", "--benchmark", "sample_logic",
                      "--task-id", "no_such_task", "--output", str(trace))  # fmt: skip
    assert unknown.returncode == 2
    assert "--task-id: no selected task has id 'no_such_task'" in unknown.stderr
    assert "Traceback" not in unknown.stderr
    assert sorted(keys_of(trace)) == sorted(before)  # nothing was lost
