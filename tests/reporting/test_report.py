"""The Markdown report on a synthetic two-model run of the full 156-task suite."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from llm_eval.reporting import render_report
from llm_eval.reporting.markdown import escape, fmt_accuracy, fmt_cost
from llm_eval.schemas import TraceRow, Usage
from tests.support.rows import make_row as support_row
from tests.support.suite import SEED_BENCHMARKS
from tests.support.suite import SUITE as FULL_SUITE

# The seed's eight benchmarks (156 tasks): the report's shapes, at a third of the size.
SUITE = {name: FULL_SUITE[name] for name in SEED_BENCHMARKS}
EXPECTED = {name: count for name, (count, _) in SUITE.items()}
CATEGORIES = ["date", "amount", "name", "place", "greeklish", "inference", "meaning", "fragment"]


def make_row(
    model: str,
    benchmark: str,
    index: int,
    *,
    status: str,
    label: str | None = None,
    simulated: bool = False,
    epoch: int = 0,
    error_kind: str | None = None,
) -> TraceRow:
    """One synthetic trace row of the suite; wrong answers extract `wrong-<index>`."""
    is_error = status == "error"
    return support_row(
        model=model,
        benchmark=benchmark,
        task_id=f"{benchmark[:4]}-{index:03d}",
        status=status,
        answer=f"answer-{index}",
        scorer="language",
        extracted=f"wrong-{index}",
        error_kind=error_kind or "timeout",
        error_message="timed out | after 120 s",
        model_label=label or model,
        provider="mock" if simulated else "litellm",
        simulated=simulated,
        task_type=SUITE.get(benchmark, (0, "single_turn"))[1],
        category=CATEGORIES[index % len(CATEGORIES)] if benchmark.startswith("lang") else "default",
        epoch=epoch,
        usage=Usage(total_tokens=100 + index, reasoning_tokens=10, cost_usd=None),
        latency_s=None if is_error else 0.5 + (index % 10) / 10,
    )


def suite_rows(
    model: str,
    *,
    wrong_every: int,
    label: str | None = None,
    simulated: bool = False,
    errors: int = 0,
    skip: int = 0,
    epoch: int = 0,
) -> list[TraceRow]:
    """A model's rows over the full suite: every `wrong_every`-th task wrong, the first
    `errors` language tasks error rows, the last `skip` language tasks missing."""
    rows = []
    for benchmark, (count, _) in SUITE.items():
        for i in range(count):
            if benchmark == "language_understanding" and i >= count - skip:
                continue
            status = "incorrect" if (i + epoch) % wrong_every == 0 else "correct"
            if benchmark == "language_understanding" and i < errors:
                status = "error"
            kind = "rate_limit" if i == 0 else "timeout"
            rows.append(
                make_row(model, benchmark, i, status=status, label=label, simulated=simulated,
                         epoch=epoch, error_kind=kind)
            )  # fmt: skip
    return rows


@pytest.fixture(scope="module")
def rows() -> list[TraceRow]:
    """A real-looking model with no errors and a simulated model with 3 error rows."""
    clean = suite_rows("openrouter/real-model", label="Real Model", wrong_every=7)
    mock = suite_rows("mock/noisy", label="Noisy Mock", simulated=True, wrong_every=4, errors=3)
    return clean + mock


@pytest.fixture(scope="module")
def report(rows: list[TraceRow]) -> str:
    """The report of the two-model run, with charts and expected task counts."""
    charts = {"language-accuracy": "../docs/images/language-accuracy.svg"}
    return render_report(rows, title="Test run", chart_paths=charts, expected_tasks=EXPECTED)


def _section(report: str, heading: str) -> str:
    """The text of one `## heading` section."""
    start = report.index(f"## {heading}\n")
    end = report.find("\n## ", start + 1)
    return report[start : end if end != -1 else len(report)]


def _table_line(section: str, first_cell: str) -> str:
    """The table row of a section whose first cell is `first_cell`."""
    return next(line for line in section.splitlines() if line.startswith(f"| {first_cell} |"))


def _cells(line: str) -> list[str]:
    """The stripped cells of one Markdown table row (cells hold no escaped `|` here)."""
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def test_every_heading_present(report: str) -> None:
    for heading in (
        "# Test run",
        "## Suite results",
        "## Full-suite summary",
        "## AIMO3 by mode",
        "## Errors and coverage",
        "## Paired comparisons",
        "## Greek reading by category",
        "## Charts",
        "## Failed tasks",
        "### Wrong answers",
        "### Error rows",
    ):
        assert f"\n{heading}\n" in f"\n{report}", heading


def test_header_counts_and_simulated_note(report: str) -> None:
    assert "2 models, 312 trace rows, 8 benchmarks." in report
    assert "> **Simulated results.** Noisy Mock (simulated)" in report
    assert "Real Model (simulated)" not in report


def test_suite_summary_totals_are_156(report: str) -> None:
    summary = _section(report, "Full-suite summary")
    for model in ("Real Model", "Noisy Mock (simulated)"):
        assert "/ 156 |" in _table_line(summary, model)
    # tokens known, cost unknown on every row: n/a, never $0
    cells = _cells(_table_line(summary, "Real Model"))
    assert cells[-1] == "n/a"
    assert cells[3] == "0"  # no unsure rows: the band is the accuracy itself
    assert cells[4] == cells[2].split(" ")[0]
    assert cells[5] == f"{sum(100 + i for _, (n, _) in SUITE.items() for i in range(n)):,}"


def test_suite_table_cells(report: str) -> None:
    suite = _section(report, "Suite results")
    line = _table_line(suite, "language_understanding")
    # real model: 108 tasks, every 7th wrong -> 16 wrong, 92 right
    assert "92 / 108, 85.2% [" in line
    assert re.search(r"\d+ / 108, \d+\.\d% \[\d+\.\d–\d+\.\d\] \(3 err\)", line)
    assert _table_line(suite, "sample_multiturn").count("/ 2,") == 2


def test_incomplete_model_shows_both_accuracies(report: str) -> None:
    coverage = _section(report, "Errors and coverage")
    noisy = _table_line(coverage, "Noisy Mock (simulated)")
    assert "**INCOMPLETE**" in noisy
    assert "rate_limit: 1, timeout: 2" in noisy
    # valid subset excludes the 3 error rows; strict keeps them in the denominator
    assert "/ 153, " in noisy and "/ 156, " in noisy
    assert "| complete |" in _table_line(coverage, "Real Model")


def test_errors_listed_apart_from_wrong_answers(report: str) -> None:
    wrong = report[report.index("### Wrong answers") : report.index("### Error rows")]
    errors = report[report.index("### Error rows") :]
    assert "timed out \\| after 120 s" in errors  # `|` escaped in cells
    # grouped per benchmark, each group folded
    assert "<details><summary>language_understanding: 3 error rows</summary>" in errors
    assert errors.count("| Noisy Mock (simulated) | lang-") == 3
    error_ids = {f"lang-{i:03d}" for i in range(3)}
    lang_wrong = wrong[wrong.index("<summary>language_understanding:") :]
    lang_wrong = lang_wrong[: lang_wrong.index("</details>")]
    wrong_noisy_lang = [
        line for line in lang_wrong.splitlines()
        if line.startswith("| Noisy Mock (simulated) | lang-")
    ]  # fmt: skip
    assert wrong_noisy_lang
    assert not any(tid in line for line in wrong_noisy_lang for tid in error_ids)


def test_missing_task_marks_incomplete(rows: list[TraceRow]) -> None:
    partial = suite_rows("other/partial", label="Partial", wrong_every=5, skip=1)
    text = render_report(rows + partial, title="t", expected_tasks=EXPECTED)
    line = _table_line(_section(text, "Errors and coverage"), "Partial")
    assert "language_understanding: 1" in line and "**INCOMPLETE**" in line
    assert "| 155 | 0 |" in line
    # three models: three pairs
    assert _section(text, "Paired comparisons").count("\n| ") == 4


def test_paired_table(report: str) -> None:
    paired = _section(report, "Paired comparisons")
    line = _table_line(paired, "Noisy Mock (simulated)")
    cells = _cells(line)
    assert cells[1] == "Real Model"
    assert cells[2] == "153"  # 156 pairs minus the 3 with an error row
    assert int(cells[3]) + int(cells[4]) + int(cells[5]) <= 153
    assert re.fullmatch(r"[+-]\d+\.\d pp \[-?\d+\.\d–-?\d+\.\d\]", cells[6])


def test_category_breakdown(report: str) -> None:
    categories = _section(report, "Greek reading by category")
    for category in CATEGORIES:
        assert f"| language_understanding | {category} |" in categories


def test_aimo3_table(report: str) -> None:
    aimo = _section(report, "AIMO3 by mode")
    assert "| Model | single turn | multi-round | Python tools |" in aimo
    assert _table_line(aimo, "Real Model").count("/ 10,") == 3


def test_chart_embedded(report: str) -> None:
    assert "](../docs/images/language-accuracy.svg)" in report
    assert "language-latency.svg" not in report


def test_no_epoch_section_with_one_epoch(report: str) -> None:
    assert "## Epochs" not in report


def test_epoch_section() -> None:
    rows = [
        row
        for epoch in range(3)
        for row in suite_rows("m/a", label="A", wrong_every=3, epoch=epoch)
        + suite_rows("m/b", label="B", wrong_every=5, epoch=epoch)
    ]
    text = render_report(rows, title="epochs")
    epochs = _section(text, "Epochs")
    assert "| pass@1 | pass@3 | Majority vote |" in epochs
    line = _table_line(epochs, "A")
    assert "| language_understanding | 108 | 3 |" in line
    # every task is wrong in exactly one of the 3 epochs: pass@3 = 100%, majority = 100%
    cells = _cells(line)
    assert cells[5] == "66.7%" and cells[6] == "100.0%" and cells[7] == "100.0%"
    assert "3 epochs per task" in text
    assert "| Epoch |" in _section(text, "Failed tasks")


def test_failed_list_is_capped() -> None:
    rows = suite_rows("m/bad", label="Bad", wrong_every=1)
    wrong = _section(render_report(rows, title="t"), "Failed tasks")
    assert "Showing the first 200 of 156" not in wrong
    many = rows + suite_rows("m/worse", label="Worse", wrong_every=1)
    text = _section(render_report(many, title="t"), "Failed tasks")
    assert "Showing the first 200 of 216 wrong answers." in text  # the cap is per benchmark


def test_empty_rows() -> None:
    assert "nothing to report" in render_report([], title="Empty")


def test_formatting_helpers() -> None:
    assert fmt_accuracy(0.9259, 0.8597, 0.9618) == "92.6% [86.0–96.2]"
    assert fmt_cost(None) == "n/a"
    assert fmt_cost(0.01234, unknown_rows=2) == "$0.0123 (partial)"
    assert escape("a|b\nc") == "a\\|b c"


def test_item_analysis_by_difficulty_with_detectable_difference_and_flat_items() -> None:
    rows = []
    for model, wrong in (("a", {"lu_002", "lu_003"}), ("b", {"lu_003"})):
        for index, level in enumerate(["easy", "medium", "hard", "hard"], start=1):
            task = f"lu_{index:03d}"
            status = "incorrect" if task in wrong else "correct"
            rows.append(support_row(model=model, benchmark="language_understanding",
                                    task_id=task, status=status, difficulty=level))  # fmt: skip
    text = render_report(rows, title="t")
    assert "## Greek reading by difficulty" in text
    hard = next(
        line for line in text.splitlines() if line.startswith("| language_understanding | hard")
    )
    assert "1 / 2" in hard
    assert "not resolvable here" in text and "Minimum detectable difference" in text
    assert "Saturated items, every answer right (2): lu_001, lu_004" in text
    # both models extract the same wrong answer there: the key is suspected, not the models
    assert "- language_understanding lu_003: `wrong` from 2 of 2 models" in text


def test_headline_metrics_are_small_and_flat() -> None:
    from llm_eval.reporting.metrics import HEADLINE_KEYS, headline_metrics, plot_records

    rows = [
        support_row(model="m", task_id=f"t{i}", status=status, latency_s=float(i))
        for i, status in enumerate(["correct", "correct", "incorrect", "error"])
    ]
    headline = headline_metrics(rows)
    assert tuple(headline) == HEADLINE_KEYS
    assert all(not isinstance(value, dict | list) for value in headline.values())
    assert headline["strict_accuracy"] == 0.5
    assert headline["valid_accuracy"] == round(2 / 3, 6)
    assert headline["errors"] == 1
    assert headline["p50_latency_s"] == 1.0  # answered rows only: latencies 0, 1, 2
    (record,) = plot_records(rows)
    assert record["ci_low"] < record["strict_accuracy"] < record["ci_high"]


def test_the_compared_metrics_carry_intervals_and_the_detectable_difference() -> None:
    from llm_eval.reporting.metrics import COMPARED_KEYS, compared_metrics, summary_metrics
    from llm_eval.reporting.statistics import minimum_detectable_difference, wilson_interval

    statuses = ["correct"] * 30 + ["incorrect"] * 8 + ["error"] * 2
    rows = [
        support_row(model="m", task_id=f"t{i}", status=status, latency_s=1.0)
        for i, status in enumerate(statuses)
    ]
    compared = compared_metrics(summary_metrics(rows))["m"]
    assert tuple(compared) == COMPARED_KEYS
    strict_low, strict_high = wilson_interval(30, 40)
    valid_low, valid_high = wilson_interval(30, 38)
    assert compared["strict_ci_low"] == pytest.approx(strict_low, abs=1e-6)
    assert compared["strict_ci_high"] == pytest.approx(strict_high, abs=1e-6)
    full = summary_metrics(rows)["m"]
    assert full["valid_ci_low"] == pytest.approx(valid_low, abs=1e-6)
    assert full["valid_ci_high"] == pytest.approx(valid_high, abs=1e-6)
    # 40 tasks at 75%: the smallest difference a paired test on them resolves
    assert compared["min_detectable_diff"] == pytest.approx(
        minimum_detectable_difference(40, 0.75), abs=1e-6
    )
    assert 0.2 < compared["min_detectable_diff"] < 0.5
    # epochs of one task are one pair: two epochs of 40 tasks still resolve what 40 do
    twice = rows + [row.model_copy(update={"epoch": 2}) for row in rows]
    again = compared_metrics(summary_metrics(twice))["m"]
    assert again["min_detectable_diff"] == compared["min_detectable_diff"]


def test_bottom_line_ranks_models_and_says_which_gaps_are_resolved(report: str) -> None:
    bottom = _section(report, "Bottom line")
    assert report.index("## Bottom line") < report.index("## Suite results")
    first, second = (line for line in bottom.splitlines() if line[:3] in ("1. ", "2. "))
    assert "Real Model" in first and "Noisy Mock" in second  # ranked by strict accuracy
    verdict = next(line for line in bottom.splitlines() if line.startswith("- "))
    assert "ahead of" in verdict and ("resolved" in verdict)
    assert "pp are not resolvable here" in bottom


def test_tool_use_and_run_metadata_sections() -> None:
    from llm_eval.schemas import ToolCallRecord

    used = ToolCallRecord(id="c1", name="python_exec", arguments="{}", result="4")
    failed = ToolCallRecord(id="c2", name="python_exec", arguments="{}", error="boom")
    rows = [
        support_row(model="m", benchmark="sample_tools", task_id="t1", task_type="tool_calling",
                    tool_calls=[used, failed], settings={"temperature": 0.0, "api_key": "x"}),
        support_row(model="m", benchmark="sample_tools", task_id="t2", task_type="tool_calling",
                    status="incorrect", settings={"temperature": 0.0}),
    ]  # fmt: skip
    provenance = {"git_commit": "abc123", "suite_version": "s1"}
    text = render_report(rows, title="t", provenance=provenance)
    tools = _section(text, "Tool use")
    assert "| m | sample_tools | 2 | 1.00 | 1 / 2 | 1 | 1 / 2 | 1 / 1 |" in tools
    meta = _section(text, "Run metadata")
    assert "`abc123`" in meta and "`s1`" in meta
    assert "temperature=0.0" in meta
    assert "api_key=x" not in meta  # a secret-named setting is redacted


def test_cost_says_whether_it_was_configured_or_looked_up() -> None:
    configured = Usage(prompt_tokens=10, completion_tokens=5, total_tokens=15, cost_usd=0.5,
                       cost_source="configured")  # fmt: skip
    looked_up = Usage(total_tokens=15, cost_usd=0.25, cost_source="price table")
    rows = [
        support_row(model="a", task_id="t1", usage=configured),
        support_row(model="b", task_id="t1", usage=looked_up),
        support_row(model="b", task_id="t2", usage=Usage(total_tokens=3)),
    ]
    summary = _section(render_report(rows, title="t"), "Full-suite summary")
    assert "$0.5000 (configured)" in _table_line(summary, "a")
    assert "$0.2500 (partial) (price table)" in _table_line(summary, "b")
    assert configured.plus(looked_up).cost_source == "mixed"


def test_configured_prices_and_their_source_are_in_the_run_metadata(config_copy: Path) -> None:
    from llm_eval.cli.report import suite_facts

    params = config_copy / "configs" / "models.yaml"
    text = params.read_text(encoding="utf-8").replace(
        '"OpenRouter listing, via models.dev, 2026-07-02"', '"a price page read 2026-12-01"', 1
    )
    params.write_text(text, encoding="utf-8")
    facts = suite_facts(config_copy)
    assert facts is not None
    prices = facts[1]
    expected = "$0.435 / $0.87 (a price page read 2026-12-01)"
    assert prices["openrouter-deepseek-v4-pro-none"] == expected
    assert "mock-varied" not in prices  # no prices configured: nothing claimed
    rows = [support_row(model="openrouter-deepseek-v4-pro-none", task_id="t1")]
    meta = _section(render_report(rows, title="t", prices=prices), "Run metadata")
    assert "USD per million tokens in / out" in meta
    assert "**openrouter-deepseek-v4-pro-none**: $0.435 / $0.87 (a price page read" in meta


def test_plot_records_leave_an_unknown_cost_unknown() -> None:
    from llm_eval.reporting.metrics import plot_records

    (record,) = plot_records([support_row(model="m", task_id="t1", usage=Usage(total_tokens=3))])
    assert record["cost_usd"] is None  # vega-lite drops it instead of drawing the model at $0


def test_the_greek_sets_are_resolved_together_and_shown_by_difficulty() -> None:
    rows = []
    for model, wrong in (("a", {"gm_002"}), ("b", {"lu_001", "gm_001"})):
        for benchmark, task, level in (
            ("language_understanding", "lu_001", "easy"),
            ("language_understanding", "lu_002", "hard"),
            ("greek_messages", "gm_001", "hard"),
            ("greek_messages", "gm_002", "medium"),
        ):
            status = "incorrect" if task in wrong else "correct"
            rows.append(support_row(model=model, benchmark=benchmark, task_id=task,
                                    status=status, difficulty=level))  # fmt: skip
    text = render_report(rows, title="t")
    resolve = _section(text, "What this suite can resolve")
    together = _cells(_table_line(resolve, "Greek sets together"))
    assert together[1] == "4"
    difficulty = _section(text, "Greek reading by difficulty")
    assert "| greek_messages | hard | 1 / 1" in difficulty and "three blind readers" in difficulty
    assert "lu_002" in resolve  # every model right: saturated, separates no model


def test_bottom_line_gives_each_model_its_cost_and_latency_beside_its_accuracy(
    report: str,
) -> None:
    bottom = _section(report, "Bottom line")
    first = next(line for line in bottom.splitlines() if line.startswith("1. "))
    assert "strict accuracy" in first
    assert "cost " in first and "p50 latency " in first and "p95 " in first


def test_charts_come_before_the_tables(report: str) -> None:
    charts = report.index("## Charts")
    assert report.index("## Bottom line") < charts < report.index("## Suite results")


def test_a_long_list_of_item_ids_is_folded_and_a_short_one_is_not() -> None:
    rows = [
        support_row(model=model, benchmark="language_understanding", task_id=f"lu_{i:03d}",
                    status="correct")
        for model in ("a", "b") for i in range(1, 31)
    ]  # fmt: skip
    text = render_report(rows, title="t")
    folded = "<details><summary>Saturated items, every answer right (30)"
    assert folded in text
    listed = text[text.index(folded) :].split("</details>", 1)[0]
    assert "lu_001" in listed and "lu_030" in listed
