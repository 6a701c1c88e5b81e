"""The report of a run that stopped early (counted against its plan), the language table
with its run-mode column, and AIMO3's valid-subset accuracy per mode."""

from __future__ import annotations

from llm_eval.reporting import render_report
from llm_eval.reporting.plan import RunPlan, StopNote
from llm_eval.schemas import TraceRow
from tests.support.rows import make_row

AIMO3 = ("aimo3_reference", "aimo3_reference_multiturn", "aimo3_reference_python_tools")


def _section(report: str, heading: str) -> str:
    start = report.index(f"## {heading}\n")
    end = report.find("\n## ", start + 1)
    return report[start : end if end != -1 else len(report)]


def _rows(model: str, benchmark: str, count: int, **fields: object) -> list[TraceRow]:
    return [
        make_row(model=model, benchmark=benchmark, task_id=f"{benchmark}-{i}", **fields)  # type: ignore[arg-type]
        for i in range(count)
    ]


def test_a_stopped_run_is_incomplete_against_its_plan_in_the_bottom_line() -> None:
    # 54 of 156 rows done; two benchmarks never reached: they are missing too.
    rows = _rows("m", "language_understanding", 50) + _rows("m", "sample_math", 4)
    planned = {"m": {"language_understanding": 108, "sample_math": 8, "sample_logic": 6,
                     "aimo3_reference": 34}}  # fmt: skip
    stop = StopNote("results/t.jsonl", "signal", "SIGTERM", "2026-12-05T07:00:00+00:00",
                    "llm-eval run --output results/t.jsonl --resume")  # fmt: skip
    report = render_report(
        rows,
        title="t",
        expected_tasks={"language_understanding": 108, "sample_math": 8},
        plan=RunPlan(planned, [stop]),
    )
    bottom = _section(report, "Bottom line")
    assert "stopped by SIGTERM at 2026-12-05T07:00:00+00:00" in bottom
    assert "llm-eval run --output results/t.jsonl --resume" in bottom
    assert "**INCOMPLETE**: 54 of 156 rows done" in bottom
    coverage = _section(report, "Errors and coverage")
    assert "language_understanding: 58, sample_math: 4, sample_logic: 6, aimo3_reference: 34" in (
        coverage
    )
    assert "**INCOMPLETE**" in coverage and "Missing rows" in coverage
    suite = _section(report, "Suite results")
    assert "(58 missing)" in suite and "| sample_logic | — (6 missing) |" in suite


def test_a_planned_model_with_no_row_is_listed_incomplete() -> None:
    rows = _rows("a", "sample_math", 8)
    plan = RunPlan({"a": {"sample_math": 8}, "b": {"sample_math": 8}})
    report = render_report(rows, title="t", plan=plan)
    assert "- **b**: no row at all — **INCOMPLETE**: 0 of 8 rows done" in report
    assert "| a | 8 | 0 | — | 0 |" in _section(report, "Errors and coverage")


def test_a_complete_run_is_not_marked() -> None:
    rows = _rows("a", "sample_math", 8)
    report = render_report(rows, title="t", plan=RunPlan({"a": {"sample_math": 8}}))
    assert "INCOMPLETE" not in report


def test_language_table_has_a_run_mode_per_model() -> None:
    rows = [
        *_rows("flash-none", "language_understanding", 4, settings={"reasoning_effort": "none"}),
        *_rows("flash-high", "language_understanding", 4, settings={"reasoning_effort": "high"}),
        *_rows("gemma", "language_understanding", 3, settings={}),
        *_rows("gemma", "language_understanding", 1, status="incorrect", settings={}),
        *_rows("gemma", "sample_math", 5),  # other benchmarks are not in this table
    ]
    table = _section(render_report(rows, title="t"), "Language understanding")
    headings = "| Model | Run mode | Correct | Accuracy | Unsure | Band (unsure wrong–right) |"
    assert headings + " Avg latency | Tokens |" in table
    assert "| flash-high | high thinking | 4 / 4 | 100.0% " in table
    assert "| flash-none | thinking disabled | 4 / 4 |" in table
    assert "| gemma | standard | 3 / 4 | 75.0% " in table and "| 200 |" in table


def test_aimo3_valid_subset_leaves_error_rows_out_per_mode() -> None:
    rows = [row for bench in AIMO3 for row in _rows("m", bench, 2)]
    rows += _rows("m", "aimo3_reference_python_tools", 3, status="error")
    rows += _rows("m", "aimo3_reference_multiturn", 1, status="incorrect")
    section = _section(render_report(rows, title="t"), "AIMO3 by mode")
    strict, valid = section.split("### Valid subset (error rows left out)")
    assert "| m | 2 / 2, 100.0% [34.2–100.0] | 2 / 3, 66.7% " in strict
    assert "2 / 5, 40.0%" in strict  # tools: the three error rows count as wrong
    assert "2 / 2, 100.0% [34.2–100.0] |\n" in valid  # tools: error rows left out
