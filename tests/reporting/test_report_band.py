"""The unsure band in the report, the metrics and `llm-eval compare`: unsure rows count as not
correct, the band runs to all of them right, and a comparison says when they could reverse it."""

from __future__ import annotations

from pathlib import Path

import pytest

from llm_eval.reporting import render_report
from llm_eval.reporting.metrics import (
    benchmark_metrics,
    compared_metrics,
    headline_metrics,
    summary_metrics,
)
from llm_eval.reporting.statistics import mcnemar_exact
from llm_eval.runner.trace_io import write_rows
from llm_eval.schemas import TraceRow
from tests.support.rows import make_row

LANGUAGE = "language_understanding"
ALPHA_UNSURE = (1, 2, 3, 5, 6, 7, 9, 11, 13, 14)
"""Alpha's unsure language tasks: Beta is right on all of them but task 5."""


def alpha_rows(unsure: tuple[int, ...] = ALPHA_UNSURE) -> list[TraceRow]:
    """40 language tasks (every 4th wrong, `unsure` unsure) and 10 math tasks (one error)."""
    rows = []
    for i in range(40):
        status = "incorrect" if i % 4 == 0 else "unsure" if i in unsure else "correct"
        rows.append(_row("a", "Alpha", LANGUAGE, i, status))
    for i in range(10):
        rows.append(_row("a", "Alpha", "sample_math", i, "error" if i == 0 else "correct"))
    return rows


def beta_rows() -> list[TraceRow]:
    """Every 5th language task wrong; a person settled tasks 1-3 and a judge tasks 4 and 5."""
    rows = []
    for i in range(40):
        source = "human" if i in (1, 2, 3) else "judge" if i in (4, 5) else "rule"
        status = "incorrect" if i % 5 == 0 else "correct"
        rows.append(_row("b", "Beta", LANGUAGE, i, status, source=source))
    rows += [_row("b", "Beta", "sample_math", i, "correct") for i in range(10)]
    return rows


def _row(model: str, label: str, benchmark: str, i: int, status: str, **fields: str) -> TraceRow:
    return make_row(model=model, model_label=label, benchmark=benchmark,
                    task_id=f"{benchmark[:4]}-{i:02d}", status=status, **fields)  # fmt: skip


@pytest.fixture(scope="module")
def report() -> str:
    return render_report(alpha_rows() + beta_rows(), title="Band")


def _section(report: str, heading: str) -> str:
    start = report.index(f"## {heading}\n")
    end = report.find("\n## ", start + 1)
    return report[start : end if end != -1 else len(report)]


def _cells(section: str, first_cell: str) -> list[str]:
    line = next(line for line in section.splitlines() if line.startswith(f"| {first_cell} |"))
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def test_summary_has_an_unsure_column_and_the_band(report: str) -> None:
    # Alpha: 29 correct, 10 incorrect, 10 unsure, 1 error = 50 rows
    alpha = _cells(_section(report, "Full-suite summary"), "Alpha")
    assert alpha[1] == "29 / 50" and alpha[2].startswith("58.0% [")
    assert alpha[3] == "10" and alpha[4] == "58.0–78.0%"  # 29/50 .. 39/50
    beta = _cells(_section(report, "Full-suite summary"), "Beta")
    assert beta[3] == "0" and beta[4] == "84.0%"


def test_cells_and_both_accuracies_carry_the_band(report: str) -> None:
    suite = _cells(_section(report, "Suite results"), LANGUAGE)
    assert suite[1].startswith("20 / 40, 50.0% [")
    assert suite[1].endswith("(10 unsure, up to 75.0%)")
    assert "unsure" not in suite[2]
    coverage = _cells(_section(report, "Errors and coverage"), "Alpha")
    assert coverage[5].startswith("29 / 49, 59.2% [")  # valid: the error row left out
    assert coverage[5].endswith("(10 unsure, up to 79.6%)")  # 39/49
    assert coverage[6].endswith("(10 unsure, up to 78.0%)")  # 39/50


def test_bottom_line_says_the_unsure_rows_could_reverse_a_resolved_gap(report: str) -> None:
    bottom = _section(report, "Bottom line")
    assert "1. **Beta**: 84.0% [" in bottom
    assert "2. **Alpha**: 58.0% [" in bottom
    assert "strict accuracy, 58.0–78.0% as its 10 unsure rows turn out wrong or right" in bottom
    # Paired on 49 tasks: Beta alone right on 17 (8 wrong, 9 unsure of Alpha's), Alpha alone
    # on 5; with Alpha's unsure rows right, 8 against 6: no longer resolved.
    p = mcnemar_exact(5, 17)
    assert p < 0.05 <= mcnemar_exact(6, 8)
    verdict = f"- Beta ahead of Alpha: resolved (McNemar exact p = {p:.4f}); "
    assert verdict + "**the unsure rows could reverse this**" in bottom


def test_paired_table_gives_both_ends_of_the_band(report: str) -> None:
    paired = _cells(_section(report, "Paired comparisons"), "Alpha")
    assert paired[1] == "Beta" and paired[2] == "49"
    assert (paired[4], paired[5]) == ("5", "17")
    assert paired[8] == "10 / 0"
    favour_alpha = f"{100 * (6 - 8) / 49:+.1f} pp (p = {mcnemar_exact(6, 8):.4f})"
    favour_beta = f"{100 * (5 - 17) / 49:+.1f} pp (p = {mcnemar_exact(5, 17):.4f})"
    assert paired[9] == f"{favour_alpha}; {favour_beta}: the unsure rows could reverse this"


def test_unsure_rows_that_cannot_change_the_outcome_are_not_flagged() -> None:
    # Alpha unsure on tasks 1 and 2 only: 6 against 10 (not resolved), and with both right
    # 6 against 8: still Beta ahead, still not resolved.
    text = render_report(alpha_rows(unsure=(1, 2)) + beta_rows(), title="t")
    assert "could reverse" not in _section(text, "Bottom line")
    assert "as its 2 unsure rows turn out wrong or right" in _section(text, "Bottom line")
    single = render_report(alpha_rows(unsure=(1,)) + beta_rows(), title="t")
    assert "as its 1 unsure row turns out wrong or right" in single
    paired = _cells(_section(text, "Paired comparisons"), "Alpha")
    assert (paired[4], paired[5], paired[8]) == ("6", "10", "2 / 0")
    assert not paired[9].endswith("could reverse this")


def test_verdicts_from_review_and_judge_are_counted_apart(report: str) -> None:
    header = report[: report.index("## Bottom line")]
    assert (
        "Of 99 verdicts, 3 come from a person's review and 2 from an LLM judge; the scoring "
        "rules gave the rest (Beta: 3 reviewed, 2 judged)."
    ) in header
    plain = render_report(alpha_rows(), title="t")
    assert "All 49 verdicts come from the scoring rules." in plain


def test_metrics_carry_the_unsure_count_and_the_top_of_the_band() -> None:
    rows = alpha_rows()
    headline = headline_metrics(rows)
    assert headline["strict_accuracy"] == 0.58 and headline["strict_accuracy_high"] == 0.78
    assert headline["unsure"] == 10 and headline["errors"] == 1
    detail = benchmark_metrics(rows)
    assert detail[LANGUAGE]["unsure"] == 10
    assert detail[LANGUAGE]["strict_accuracy_high"] == 0.75
    assert detail["overall"]["valid_accuracy_high"] == round(39 / 49, 6)
    # summary.json (what `dvc exp show` reads) keeps the band's top, leaves the counts out
    compared = compared_metrics(summary_metrics(rows))["a"]
    assert compared["strict_accuracy_high"] == 0.78 and "unsure" not in compared
    assert compared["strict_ci_low"] < compared["strict_accuracy"] < compared["strict_ci_high"]


def test_compare_says_when_the_unsure_rows_could_reverse_the_winner(tmp_path: Path) -> None:
    from llm_eval.cli.compare import execute_compare

    first, second, out = tmp_path / "alpha.jsonl", tmp_path / "beta.jsonl", tmp_path / "c.md"
    write_rows(first, alpha_rows())
    write_rows(second, [row.model_copy(update={"model": "a"}) for row in beta_rows()])
    assert execute_compare(first, second, out) == 0
    text = out.read_text(encoding="utf-8")
    assert "**the unsure rows could reverse this**" in _section(text, "Bottom line")
    assert "| 10 / 0 |" in _section(text, "Paired comparisons")
