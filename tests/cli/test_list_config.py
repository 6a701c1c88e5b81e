"""`llm-eval list-config` in an 80-column terminal, and `--categories`."""

from __future__ import annotations

import re

import pytest

from tests.support.cli import llm_eval


@pytest.mark.parametrize("args", [[], ["--categories"]])
def test_every_line_fits_80_columns(args: list[str]) -> None:
    result = llm_eval("list-config", *args, env={"COLUMNS": "80"})
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines
    too_wide = [line for line in lines if len(line) > 80]
    assert too_wide == []


def test_names_stay_whole_at_80_columns() -> None:
    result = llm_eval("list-config", env={"COLUMNS": "80"})
    assert result.returncode == 0, result.stderr
    for name in ("openrouter-deepseek-v4-pro-none", "openrouter/google/gemma-4-31b-it:nitro",
                 "aimo3_reference_python_tools", "hard_math_multi_round", "OPENROUTER_API_KEY",
                 "python_exec"):  # fmt: skip
        assert name in result.stdout
    assert re.search(r"language_understanding\s+108\s", result.stdout)
    assert "9 active benchmarks, 521 tasks" in result.stdout


def test_categories_lists_each_benchmark_with_counts() -> None:
    result = llm_eval("list-config", "--categories", env={"COLUMNS": "80"})
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "language_understanding (108 tasks)" in out
    section = out.split("language_understanding (108 tasks)")[1].split("sample_math")[0]
    assert re.search(r"\byes_no 9\b", section)
    assert len(re.findall(r"\b[a-z_]+ 9\b", section)) == 12  # 12 categories x 9 tasks
    assert re.search(r"\barithmetic 4\b", out) and re.search(r"\bword_problem 4\b", out)
    assert "aimo3_reference_python_tools (10 tasks)" in out
