"""The CLI as a user runs it: real subprocesses, the real suite, the offline mock provider."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from llm_eval.schemas import CallRecord
from tests.conftest import REPO
from tests.support.catalog import add_models
from tests.support.cli import llm_eval
from tests.support.rows import make_row

HEAVY = ("litellm", "openai", "mlflow", "pandas", "altair", "vl_convert")


def test_validate_reports_the_suite() -> None:
    # How fast it starts is checked by what it imports (below), not by a wall clock: these
    # machines are shared and often busy.
    result = llm_eval("validate")
    assert result.returncode == 0, result.stderr
    assert "9 benchmarks, 521 tasks" in result.stdout


@pytest.mark.parametrize("command", [["validate"], ["list-config"]])
def test_start_up_imports_no_heavy_library(command: list[str]) -> None:
    probe = (
        "import sys, runpy\n"
        f"sys.argv = ['llm-eval', *{command!r}]\n"
        "try:\n    runpy.run_module('llm_eval.cli', run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        f"print('HEAVY=' + ','.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True)
    assert "HEAVY=\n" in result.stdout, result.stdout + result.stderr


def test_list_config_shows_models_benchmarks_prompts_tools() -> None:
    result = llm_eval("list-config", env={"COLUMNS": "200"})
    assert result.returncode == 0, result.stderr
    for needle in ("mock-varied", "openrouter-gemma-4-31b-it-nitro", "language_understanding",
                   "108", "hard_math_multi_round", "python_exec", "memory_budget_mb",
                   "(half the RAM)"):  # fmt: skip
        assert needle in result.stdout


@pytest.mark.slow
def test_mock_run_of_the_whole_suite_then_score_and_report(tmp_path: Path) -> None:
    trace = tmp_path / "mock.jsonl"
    result = llm_eval("run", "--mock", "--output", str(trace))
    assert result.returncode == 0, result.stderr[-2000:]
    rows = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    per_model: dict[str, int] = {}
    for row in rows:
        per_model[row["model"]] = per_model.get(row["model"], 0) + 1
    assert per_model == {"mock-varied": 521, "mock-flaky": 521}
    assert {row["status"] for row in rows} <= {"correct", "incorrect", "unsure", "error"}
    # Unsure rows are the flaky model's second thoughts («X, ή μάλλον Y») or its Greeklish
    # answers where the task demands a form (the rules cannot check the form in Latin script).
    unsure = [row for row in rows if row["status"] == "unsure"]
    assert unsure and all(
        row["model"] == "mock-flaky"
        and (", ή μάλλον " in row["response"] or row["score"]["unsure_reason"] == "form_demand")
        for row in unsure
    ), [(row["model"], row["response"]) for row in unsure]
    tool_rows = [r for r in rows if r["benchmark"] == "sample_tools"]
    assert all(r["tool_calls"] and r["tool_calls"][0]["name"] == "python_exec" for r in tool_rows)
    varied = [r for r in rows if r["model"] == "mock-varied"]
    assert all(r["status"] == "correct" for r in varied), [
        (r["task_id"], r["response"]) for r in varied if r["status"] != "correct"
    ]

    before = trace.read_bytes()
    rescored = llm_eval("score", "--results", str(trace))
    assert rescored.returncode == 0, rescored.stderr
    assert "0 verdict(s) changed" in rescored.stdout
    assert trace.read_bytes() == before  # same verdicts as at run time, same bytes

    report = tmp_path / "report.md"
    made = llm_eval("report", "--results", str(trace), "--output", str(report), "--no-charts")
    assert made.returncode == 0, made.stderr
    text = report.read_text(encoding="utf-8")
    assert "521" in text and "simulated" in text.lower()


def test_a_real_model_without_its_key_fails_before_any_request(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "OPENROUTER_API_KEY"}
    env["LLM_EVAL_TRACKING"] = "0"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "llm_eval.cli",
            "run",
            "--model",
            "openrouter-gemma-4-31b-it-nitro",
            "--benchmark",
            "sample_math",
            "--output",
            str(tmp_path / "x.jsonl"),
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
    )
    assert result.returncode != 0
    assert "OPENROUTER_API_KEY" in result.stderr
    assert not (tmp_path / "x.jsonl").exists()


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (
            ["--max-tokens", "100", "--context-size", "200"],
            "--max-tokens (100) and --context-size (200)",
        ),
        (["--global-limit", "0"], "--global-limit"),
        (["--model", "no-such-model"], "unknown model 'no-such-model'"),
        (["--benchmark", "nope"], "unknown benchmark 'nope'"),
    ],
)
def test_bad_options_are_named_before_anything_runs(
    args: list[str], needle: str, tmp_path: Path
) -> None:
    out = tmp_path / "x.jsonl"
    result = llm_eval("run", "--mock", "--output", str(out), *args)
    assert result.returncode == 2, result.stderr
    assert needle in result.stderr
    assert not out.exists()


def test_equal_max_tokens_and_context_size_are_accepted(tmp_path: Path) -> None:
    out = tmp_path / "x.jsonl"
    result = llm_eval("run", "--mock", "--benchmark", "sample_math", "--max-tokens", "64",
                      "--context-size", "64", "--output", str(out))  # fmt: skip
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows and all(row["settings"]["max_tokens"] == 64 for row in rows)


def test_config_root_runs_a_copied_tree_from_elsewhere(config_copy: Path, tmp_path: Path) -> None:
    out = tmp_path / "x.jsonl"
    result = llm_eval("run", "--config-root", str(config_copy), "--mock", "--benchmark",
                      "sample_logic", "--output", str(out), cwd=tmp_path)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert len(out.read_text().splitlines()) == 12


@pytest.mark.slow
def test_compare_pairs_two_runs_of_the_same_model(tmp_path: Path) -> None:
    first, second = tmp_path / "a" / "run.jsonl", tmp_path / "b" / "run.jsonl"
    for path in (first, second):
        path.parent.mkdir()
        made = llm_eval("run", "--mock", "--model", "mock-flaky", "--benchmark", "sample_math",
                        "--output", str(path))  # fmt: skip
        assert made.returncode == 0, made.stderr
    result = llm_eval("compare", str(first), str(second))
    assert result.returncode == 0, result.stderr
    assert "[A]" in result.stdout and "[B]" in result.stdout
    assert "| 8 | " in result.stdout  # eight tasks paired across the two runs


def test_a_negative_context_size_is_named_as_such() -> None:
    result = llm_eval("run", "--mock", "--context-size", "-1")
    assert result.returncode == 2 and "--context-size" in result.stderr
    assert "--max-tokens" not in result.stderr


def test_an_unknown_category_names_the_known_ones() -> None:
    result = llm_eval("run", "--mock", "--benchmark", "sample_math", "--include", "poetry")
    assert result.returncode == 2
    assert "--include: no selected task has category 'poetry'" in result.stderr
    assert "arithmetic" in result.stderr


@pytest.mark.slow
def test_a_run_of_only_errors_says_what_the_first_error_was(config_copy: Path) -> None:
    unreachable = {"provider": "litellm", "model": "openai/x", "api_base": "http://127.0.0.1:9/v1"}
    add_models(config_copy, {"nowhere": unreachable})
    result = llm_eval("run", "--config-root", str(config_copy), "--model", "nowhere",
                      "--benchmark", "sample_logic", "--max-attempts", "1",
                      "--output", str(config_copy / "t.jsonl"))  # fmt: skip
    assert result.returncode == 3, result.stderr[-1000:]
    assert "first error of nowhere: connection:" in result.stdout


def test_score_and_report_name_a_corrupt_trace_line_and_write_nothing(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    run = llm_eval("run", "--mock", "--benchmark", "sample_logic", "--model", "mock-varied",
                   "--output", str(trace))  # fmt: skip
    assert run.returncode == 0, run.stderr
    lines = trace.read_bytes().split(b"\n")
    lines[1] = lines[1][:30] + b"\xff" + lines[1][30:]
    trace.write_bytes(b"\n".join(lines))
    before = trace.read_bytes()
    report = ["report", "--results", str(trace), "--output", str(tmp_path / "r.md")]
    for command in (["score", "--results", str(trace)], report):
        result = llm_eval(*command)
        assert result.returncode == 1 and f"{trace}:2: not valid UTF-8" in result.stderr
    assert trace.read_bytes() == before and not (tmp_path / "r.md").exists()


def test_score_reads_a_cut_off_reply_as_cut_off_and_explain_names_the_committed_span(
    tmp_path: Path,
) -> None:
    cut = CallRecord(latency_s=1.0, attempts=1, finish_reason="length")
    rows = [
        make_row(task_id="cut", answer="96", response="so 96 candidates, and we still", calls=[cut]),  # noqa: E501
        make_row(task_id="done", answer="96", response="96\n\nCheck: 100 - 4 = 96 ✓"),
        make_row(
            task_id="reason", answer="Τετάρτη", scorer="language", distractors=["Τρίτη"],
            response="Απάντηση: Την Τετάρτη — η Τρίτη ήταν η αρχική μέρα.",
        ),
    ]  # fmt: skip
    trace = tmp_path / "rows.jsonl"
    trace.write_text("".join(row.model_dump_json() + "\n" for row in rows), encoding="utf-8")
    assert llm_eval("score", "--results", str(trace)).returncode == 0
    scored = {row["task_id"]: row for row in map(json.loads, trace.read_text().splitlines())}
    assert (scored["cut"]["status"], scored["cut"]["score"]["method"]) == ("incorrect", "truncated")
    assert scored["done"]["status"] == scored["reason"]["status"] == "correct"

    explained = llm_eval("score", "--results", str(trace), "--explain", "cut")
    assert explained.returncode == 0, explained.stderr
    assert "cut off" in explained.stdout and "MATCH truncated" in explained.stdout
    explained = llm_eval("score", "--results", str(trace), "--explain", "reason")
    assert "committed_span: the reply commits to 'Την Τετάρτη'" in explained.stdout
    assert "correct by containment" in explained.stdout


def test_score_marks_a_reply_it_cannot_settle_unsure_and_explain_names_the_class(
    tmp_path: Path,
) -> None:
    rows = [
        make_row(task_id="english", answer="Τρίτη", scorer="language", response="Tuesday."),
        make_row(task_id="sure", answer="Τρίτη", scorer="language", response="Την Πέμπτη."),
    ]
    trace = tmp_path / "rows.jsonl"
    trace.write_text("".join(row.model_dump_json() + "\n" for row in rows), encoding="utf-8")
    assert llm_eval("score", "--results", str(trace)).returncode == 0
    scored = {row["task_id"]: row for row in map(json.loads, trace.read_text().splitlines())}
    assert scored["english"]["status"] == "unsure"
    assert scored["english"]["score"]["unsure_reason"] == "other_language"
    assert scored["sure"]["status"] == "incorrect"

    explained = llm_eval("score", "--results", str(trace), "--explain", "english")
    assert explained.returncode == 0, explained.stderr
    assert "verdict: unsure (other_language: " in explained.stdout
    explained = llm_eval("score", "--results", str(trace), "--explain", "sure")
    assert "verdict: incorrect" in explained.stdout
