"""Render scored trace rows as one Markdown report.

Every number comes from `reporting.tables` (pandas) and `llm_eval.reporting.statistics`; this module
only lays the sections out. Formatting lives in `md_format`, the bottom line and the paired
comparisons in `md_ranking`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from llm_eval.redaction import is_secret_name, redact
from llm_eval.reporting import tables as tb
from llm_eval.reporting.escape import html_text, md_code, md_text, md_url
from llm_eval.reporting.md_format import (
    CELL_CAP,
    band_note,
    escape,
    fmt_accuracy,
    fmt_band,
    fmt_cell,
    fmt_cost,
    fmt_int,
    fmt_interval,
    fmt_pct,
    fmt_seconds,
    is_missing,
    md_table,
)
from llm_eval.reporting.md_items import resolution_section
from llm_eval.reporting.md_ranking import (
    SharedTables,
    bottom_line_section,
    incomplete_note,
    paired_section,
    suite_resolution,
)

if TYPE_CHECKING:
    import pandas as pd

    from llm_eval.reporting.plan import RunPlan, StopNote
    from llm_eval.schemas import TraceRow

BAND_HEADING = "Band (unsure wrong–right)"
"""Heading of the column giving an accuracy's unsure band."""

LIST_CAP = 200
"""Most rows shown in each of the failed-task lists; the rest are counted, not listed."""

CHART_TITLES: dict[str, str] = {
    "language-accuracy": "Language understanding accuracy per model (95% Wilson interval)",
    "language-latency": "Language understanding latency per model (p50 and p95)",
    "aimo3-accuracy": "AIMO3 accuracy by mode per model",
    "benchmark-heatmap": "Accuracy per benchmark and model",
    "accuracy-cost": "Accuracy against cost (whole suite)",
    "accuracy-latency": "Accuracy against p50 latency (whole suite)",
}

# --------------------------------------------------------------------------- report


def render_report(
    rows: Sequence[TraceRow],
    *,
    title: str,
    chart_paths: Mapping[str, str] | None = None,
    expected_tasks: Mapping[str, int] | None = None,
    provenance: Mapping[str, str] | None = None,
    prices: Mapping[str, str] | None = None,
    plan: RunPlan | None = None,
) -> str:
    """The full Markdown report for a set of scored trace rows.

    `chart_paths` maps chart names (`language-accuracy`, ...) to paths relative to the
    report; `expected_tasks` maps benchmark names to task counts, to flag missing tasks;
    `plan` (from the runs' records) gives the rows each model was to have, and the runs
    that stopped early; `provenance` (git commit, suite version) and `prices` (model -> its
    configured prices and their source) go into the run metadata section.
    """
    if not rows:
        return f"# {md_text(title)}\n\nNo trace rows were given, so there is nothing to report.\n"
    frame = tb.rows_frame(rows)
    # The per-model table, the paired tests (a bootstrap per pair of models), the coverage
    # and the suite's resolution serve the bottom line and their own sections: each
    # computed once.
    shared = SharedTables(
        tb.model_table(frame),
        tb.paired_table(frame),
        suite_resolution(frame),
        tb.coverage_table(frame, expected_tasks, plan),
        tuple(plan.stops) if plan else (),
    )
    sections = [
        _header(frame, title),
        bottom_line_section(shared),
        _charts_section(chart_paths) if chart_paths else "",  # the picture before the tables
        *_body_sections(frame, expected_tasks, shared),
        _tool_use_section(rows),
    ]
    sections.append(_failures_section(frame))
    sections.append(_metadata_section(rows, provenance or {}, prices or {}))
    return "\n\n".join(section.rstrip() for section in sections if section) + "\n"


def _body_sections(
    frame: pd.DataFrame, expected: Mapping[str, int] | None, shared: SharedTables
) -> list[str]:
    """Every table section after the bottom line and the charts, in report order."""
    builders: list[Callable[[], str]] = [
        lambda: _suite_section(frame, shared.coverage),
        lambda: _language_section(frame),
        lambda: _summary_section(shared.models),
        lambda: _aimo3_section(frame),
        lambda: _coverage_section(shared.coverage, expected is not None, shared.stops),
        lambda: paired_section(shared),
        lambda: _epoch_section(frame),
        lambda: _category_section(frame),
        lambda: _difficulty_section(frame),
        lambda: resolution_section(frame),
    ]
    return [build() for build in builders]


def _header(frame: pd.DataFrame, title: str) -> str:
    """Title, what the report covers, how to read it, and the simulated-results warning."""
    models = tb.ordered_models(frame)
    benchmarks = tb.ordered_benchmarks(frame["benchmark"])
    epochs = tb.epoch_count(frame)
    lines = [
        f"# {md_text(title)}",
        "",
        f"{len(models)} model{'s' if len(models) != 1 else ''}, "
        f"{len(frame)} trace rows, {len(benchmarks)} benchmarks"
        + (f", {epochs} epochs per task." if epochs > 1 else "."),
        "",
        "Accuracy is correct / total rows, so an error row counts against it; the error and "
        "coverage table also gives the accuracy over answered rows only. Intervals are 95% "
        "(Wilson for single proportions), in percent.",
        "",
        "Only sure verdicts count as correct. An `unsure` row is a reply the scoring rules "
        "could not settle: it counts as not correct, and the band `low–high` is where the "
        "accuracy moves once such rows are settled, from all wrong (low, the accuracy "
        "itself) to all right (high).",
        "",
        _verdict_sources_line(frame),
    ]
    simulated = sorted(frame.loc[frame["simulated"], "display"].unique().tolist())
    if simulated:
        lines += ["", _simulated_note(simulated)]
    return "\n".join(lines)


def _verdict_sources_line(frame: pd.DataFrame) -> str:
    """How many verdicts a person's review and an LLM judge gave, each counted apart."""
    verdicts = int(frame["source"].notna().sum())
    by_model = tb.verdict_sources(frame)
    human = sum(counts["human"] for counts in by_model.values())
    judge = sum(counts["judge"] for counts in by_model.values())
    if not human and not judge:
        return f"All {verdicts:,} verdicts come from the scoring rules."
    line = (
        f"Of {verdicts:,} verdicts, {human:,} come from a person's review and {judge:,} from "
        "an LLM judge; the scoring rules gave the rest"
    )
    if len(tb.ordered_models(frame)) > 1:
        parts = [f"{escape(m)}: {c['human']} reviewed, {c['judge']} judged"
                 for m, c in by_model.items()]  # fmt: skip
        line += f" ({'; '.join(parts)})"
    return line + "."


def _simulated_note(simulated: Sequence[str]) -> str:
    """A quoted warning naming every simulated model."""
    names = ", ".join(escape(name) for name in simulated)
    return (
        f"> **Simulated results.** {names} ran on a simulated provider, one that is given "
        "the expected answer. Their numbers exercise the pipeline and say nothing about any "
        "real model."
    )


def _suite_section(frame: pd.DataFrame, coverage: pd.DataFrame) -> str:
    """Benchmarks x models, each cell `correct / total, accuracy [lo–hi]`."""
    table = tb.benchmark_table(frame)
    models = tb.ordered_models(frame)
    missing = {r["display"]: r["missing"] for r in coverage.to_dict("records")}
    names = tb.ordered_benchmarks(
        [*frame["benchmark"], *(b for m in models for b in missing.get(m, {}))]
    )
    cells = {
        (r["benchmark"], r["display"]): fmt_cell(r)
        + _missing_note(missing.get(r["display"], {}).get(r["benchmark"], 0))
        for r in table.to_dict("records")
    }
    body = [
        [escape(name), *(cells.get((name, m)) or "—" + _missing_note(missing[m].get(name, 0))
                         for m in models)]
        for name in names
    ]  # fmt: skip
    return "## Suite results\n\n" + md_table(["Benchmark", *map(escape, models)], body)


def _missing_note(missing: int) -> str:
    """` (n missing)` when a model lacks rows the run planned (or the benchmark holds)."""
    return f" ({missing} missing)" if missing > 0 else ""


def _language_section(frame: pd.DataFrame) -> str:
    """`language_understanding` alone, one row per model with the mode it ran in."""
    table = tb.language_table(frame)
    if table.empty:
        return ""
    headers = ["Model", "Run mode", "Correct", "Accuracy", "Unsure", BAND_HEADING,
               "Avg latency", "Tokens"]  # fmt: skip
    body = [
        [escape(r["display"]), escape(r["run_mode"]), f"{int(r['correct'])} / {int(r['total'])}",
         fmt_accuracy(r["strict_accuracy"], r["strict_lo"], r["strict_hi"]),
         str(int(r["unsure"])), fmt_band(r["strict_accuracy"], r["strict_high"]),
         fmt_seconds(r["latency_mean"]), fmt_int(r["total_tokens"])]
        for r in table.to_dict("records")
    ]  # fmt: skip
    note = (
        "The run mode is the model's `reasoning_effort`: `thinking disabled` for `none`, "
        "`standard` when it sets none."
    )
    return "## Language understanding\n\n" + md_table(headers, body) + "\n\n" + note


def _summary_section(models: pd.DataFrame) -> str:
    """One row per model over the whole suite: accuracy, tokens, latency, cost."""
    headers = [
        "Model", "Correct / total", "Accuracy", "Unsure", BAND_HEADING, "Tokens",
        "Reasoning tokens", "Avg latency", "p50 latency", "p95 latency", "Cost",
    ]  # fmt: skip
    body = [_summary_row(r) for r in models.to_dict("records")]
    note = (
        "Latency is measured over answered rows; tokens and cost over all rows. A cost is "
        "`configured` (the model's `input_cost_per_mtok` / `output_cost_per_mtok` in "
        "configs/models.yaml) or from LiteLLM's `price table`; `n/a` when neither knows the model."
    )
    return "## Full-suite summary\n\n" + md_table(headers, body) + "\n\n" + note


def _summary_row(r: Mapping[str, Any]) -> list[str]:
    """Cells of one model's full-suite summary row."""
    return [
        escape(r["display"]),
        f"{int(r['correct'])} / {int(r['total'])}",
        fmt_accuracy(r["strict_accuracy"], r["strict_lo"], r["strict_hi"]),
        str(int(r["unsure"])),
        fmt_band(r["strict_accuracy"], r["strict_high"]),
        fmt_int(r["total_tokens"]),
        fmt_int(r["reasoning_tokens"]),
        fmt_seconds(r["latency_mean"]),
        fmt_seconds(r["p50"]),
        fmt_seconds(r["p95"]),
        fmt_cost(r["cost_usd"], int(r["cost_usd_unknown"]))
        + (f" ({escape(r['cost_source'])})" if isinstance(r.get("cost_source"), str) else ""),
    ]


def _aimo3_section(frame: pd.DataFrame) -> str:
    """Models x AIMO3 mode (single turn, multi-round, Python tools); empty without AIMO3."""
    subset = frame[frame["benchmark"].isin(list(tb.AIMO3_MODES))]
    if subset.empty:
        return ""
    table = tb.benchmark_table(subset).to_dict("records")
    headers = ["Model", *tb.AIMO3_MODES.values()]
    parts = ["## AIMO3 by mode"]
    for heading, cell in (
        ("Strict (error rows count as wrong)", fmt_cell),
        ("Valid subset (error rows left out)", _valid_cell),
    ):
        cells = {(r["display"], r["benchmark"]): cell(r) for r in table}
        body = [
            [escape(model), *(cells.get((model, bench), "—") for bench in tb.AIMO3_MODES)]
            for model in tb.ordered_models(subset)
        ]
        parts += [f"### {heading}", md_table(headers, body)]
    return "\n\n".join(parts)


def _valid_cell(row: Mapping[str, Any]) -> str:
    """`correct / answered, accuracy [lo–hi]` over the rows that did not error."""
    answered = int(row["total"]) - int(row["errors"])
    accuracy = fmt_accuracy(row["valid_accuracy"], row["valid_lo"], row["valid_hi"])
    band = band_note(row["unsure"], row["valid_high"])
    return f"{int(row['correct'])} / {answered}, {accuracy}{band}"


def _coverage_section(table: pd.DataFrame, checked: bool, stops: Sequence[StopNote]) -> str:
    """Rows, errors by kind, missing rows, both accuracies and a complete/INCOMPLETE mark."""
    planned = table["planned"].notna().any()
    checked = checked or bool(planned)
    headers = [
        "Model", "Rows", "Errors", "Errors by kind", "Missing rows" if planned else "Missing tasks",
        "Valid-subset accuracy", "Strict accuracy", "Status",
    ]  # fmt: skip
    body = [_coverage_row(r, checked) for r in table.to_dict("records")]
    lines = ["## Errors and coverage", "", md_table(headers, body)]
    incomplete = [r for r in table.to_dict("records") if not r["complete"]]
    if incomplete:
        lines += ["", incomplete_note(incomplete)]
    if stops:
        lines += ["", *(f"- {md_code(s.results)}: {md_text(s.reason())}"
                        + (f" at {md_text(s.at)}." if s.at else ".") for s in stops)]  # fmt: skip
    if not checked:
        lines += ["", "No expected task counts were given, so missing tasks were not checked."]
    return "\n".join(lines)


def _coverage_row(r: Mapping[str, Any], checked: bool) -> list[str]:
    """Cells of one model's coverage row."""
    kinds = ", ".join(f"{escape(kind)}: {n}" for kind, n in r["errors_by_kind"].items()) or "—"
    missing = ", ".join(f"{escape(name)}: {n}" for name, n in r["missing"].items())
    correct, total, errors = int(r["correct"]), int(r["total"]), int(r["errors"])
    if not total:
        return [escape(r["display"]), "0", "0", "—", missing, "n/a", "n/a", "**INCOMPLETE**"]
    valid = fmt_accuracy(r["valid_accuracy"], r["valid_lo"], r["valid_hi"])
    valid += band_note(r["unsure"], r["valid_high"])
    strict = fmt_accuracy(r["strict_accuracy"], r["strict_lo"], r["strict_hi"])
    strict += band_note(r["unsure"], r["strict_high"])
    return [
        escape(r["display"]),
        str(int(r["rows"])),
        str(errors),
        kinds,
        missing or ("0" if checked else "n/a"),
        f"{correct} / {total - errors}, {valid}",
        f"{correct} / {total}, {strict}",
        "complete" if r["complete"] else "**INCOMPLETE**",
    ]


def _epoch_section(frame: pd.DataFrame) -> str:
    """Across-epoch statistics per model x benchmark; empty with a single epoch."""
    if tb.epoch_count(frame) < 2:
        return ""
    table = tb.epoch_table(frame)
    k = tb.epoch_count(frame)
    headers = [
        "Model", "Benchmark", "Tasks", "Epochs", "Mean ± std", "pass@1", f"pass@{k}",
        "Majority vote", "Clustered 95% interval",
    ]  # fmt: skip
    body = [_epoch_row(r) for r in table.to_dict("records")]
    note = (
        f"pass@k is the unbiased estimator with k = 1 and k = {k} (the number of epochs); "
        "majority vote counts a task as solved when more than half its epochs were correct "
        "(ties are not solved); the clustered interval treats a task's epochs as one cluster."
    )
    return "## Epochs\n\n" + md_table(headers, body) + "\n\n" + note


def _epoch_row(r: Mapping[str, Any]) -> list[str]:
    """Cells of one model x benchmark epoch row."""
    return [
        escape(r["display"]),
        escape(r["benchmark"]),
        str(int(r["tasks"])),
        str(int(r["epochs"])),
        f"{fmt_pct(r['mean'])} ± {100 * float(r['std']):.1f} pp",
        fmt_pct(r["pass_1"]),
        fmt_pct(r["pass_k"]),
        fmt_pct(r["majority"]),
        fmt_interval(r["cluster_lo"], r["cluster_hi"]),
    ]


def _category_section(frame: pd.DataFrame) -> str:
    """Categories of each Greek reading set x models; empty without Greek rows."""
    table = tb.category_table(frame)
    if table.empty:
        return ""
    models = tb.ordered_models(frame[frame["benchmark"].isin(tb.GREEK_BENCHMARKS)])
    records = table.to_dict("records")
    cells = {(r["benchmark"], r["category"], r["display"]): fmt_cell(r) for r in records}
    keys = sorted({(r["benchmark"], r["category"]) for r in records},
                  key=lambda k: (tb.GREEK_BENCHMARKS.index(k[0]), k[1]))  # fmt: skip
    body = [[escape(b), escape(c), *(cells.get((b, c, m), "—") for m in models)] for b, c in keys]
    headers = ["Benchmark", "Category", *map(escape, models)]
    return "## Greek reading by category\n\n" + md_table(headers, body)


def _difficulty_section(frame: pd.DataFrame) -> str:
    """Each Greek reading set's accuracy per difficulty x model; empty without difficulties.

    The difficulty of a task is measured: how many of three blind readers answered it right.
    """
    table = tb.difficulty_table(frame)
    if table.empty:
        return ""
    models = tb.ordered_models(frame[frame["benchmark"].isin(tb.GREEK_BENCHMARKS)])
    records = table.to_dict("records")
    cells = {(r["benchmark"], r["difficulty"], r["display"]): fmt_cell(r) for r in records}
    present = {(r["benchmark"], r["difficulty"]) for r in records}
    body = [
        [escape(b), level, *(cells.get((b, level, m), "—") for m in models)]
        for b in tb.GREEK_BENCHMARKS
        for level in ("easy", "medium", "hard")
        if (b, level) in present
    ]
    intro = (
        "A task's difficulty is measured, not assigned: `easy` when three blind readers "
        "answered it right, `medium` when two did, `hard` when at most one did "
        "(`data/README.md`)."
    )
    return "\n\n".join(
        ["## Greek reading by difficulty", intro,
         md_table(["Benchmark", "Difficulty", *map(escape, models)], body)]
    )  # fmt: skip


def _charts_section(chart_paths: Mapping[str, str]) -> str:
    """The charts as Markdown images, known charts first in their fixed order."""
    names = [n for n in CHART_TITLES if n in chart_paths]
    names += sorted(set(chart_paths) - set(CHART_TITLES))
    images = [f"![{md_text(CHART_TITLES.get(n, n))}]({md_url(chart_paths[n])})" for n in names]
    return "## Charts\n\n" + "\n\n".join(images)


def _failures_section(frame: pd.DataFrame) -> str:
    """Wrong answers and error rows per benchmark, each group folded in `<details>`."""
    with_epoch = tb.epoch_count(frame) > 1
    parts = ["## Failed tasks"]
    for heading, rows, columns, what in (
        ("Wrong answers", tb.failure_rows(frame), _failure_columns(with_epoch), "wrong answers"),
        ("Error rows", tb.error_rows(frame), _error_columns(with_epoch), "error rows"),
    ):
        parts += ["", f"### {heading}", ""]
        if rows.empty:
            parts.append(f"No {what}.")
            continue
        for benchmark in tb.ordered_benchmarks(rows["benchmark"]):
            group = rows[rows["benchmark"] == benchmark]
            parts += [
                f"<details><summary>{html_text(benchmark)}: {len(group)} {what}</summary>",
                "",
                _row_list(group, columns, what),
                "",
                "</details>",
                "",
            ]
    return "\n".join(parts)


def _failure_columns(with_epoch: bool) -> list[tuple[str, str]]:
    """(heading, frame column) pairs of the wrong-answer list."""
    columns = [("Model", "display"), ("Task", "task_id")]
    columns += [("Epoch", "epoch")] if with_epoch else []
    return columns + [("Expected", "answer"), ("Extracted", "extracted"), ("Method", "method")]


def _error_columns(with_epoch: bool) -> list[tuple[str, str]]:
    """(heading, frame column) pairs of the error-row list."""
    columns = [("Model", "display"), ("Task", "task_id")]
    columns += [("Epoch", "epoch")] if with_epoch else []
    return columns + [("Error kind", "error_kind"), ("Message", "error_message")]


def _row_list(rows: pd.DataFrame, columns: list[tuple[str, str]], what: str) -> str:
    """A capped table of rows, saying how many were left out."""
    if rows.empty:
        return f"No {what}."
    shown = rows.head(LIST_CAP)
    body = [[_list_cell(r[col], col) for _, col in columns] for r in shown.to_dict("records")]
    table = md_table([heading for heading, _ in columns], body)
    if len(rows) > LIST_CAP:
        table += f"\n\nShowing the first {LIST_CAP} of {len(rows)} {what}."
    return table


QUOTED_COLUMNS = frozenset({"answer", "extracted", "error_message"})
"""Failed-task columns shown verbatim in a code span: answers and server messages."""


def _list_cell(value: Any, column: str) -> str:
    """A list cell: `—` for an absent value (e.g. nothing extracted); answers and messages
    in a code span, names as text."""
    if is_missing(value):
        return "—"
    return md_code(value, CELL_CAP) if column in QUOTED_COLUMNS else escape(value)


# --------------------------------------------------------------------------- tool use


def _tool_use_section(rows: Sequence[TraceRow]) -> str:
    """Per model and tool-calling benchmark: calls per task, share using the tool, errors."""
    displays = tb.display_names(rows)
    groups: dict[tuple[str, str], list[TraceRow]] = {}
    for row in rows:
        if row.task_type == "tool_calling":
            groups.setdefault((displays[row.model], row.benchmark), []).append(row)
    if not groups:
        return ""
    body = []
    for (model, benchmark), group in sorted(groups.items()):
        calls = sum(len(row.tool_calls) for row in group)
        used = sum(bool(row.tool_calls) for row in group)
        errors = sum(record.error is not None for row in group for record in row.tool_calls)
        correct = sum(row.status == "correct" for row in group)
        correct_used = sum(row.status == "correct" for row in group if row.tool_calls)
        body.append([
            escape(model), escape(benchmark), str(len(group)), f"{calls / len(group):.2f}",
            f"{used} / {len(group)}", str(errors),
            f"{correct} / {len(group)}", f"{correct_used} / {used}" if used else "—",
        ])  # fmt: skip
    headers = ["Model", "Benchmark", "Tasks", "Tool calls per task", "Tasks using the tool",
               "Tool errors", "Correct", "Correct when the tool was used"]  # fmt: skip
    note = (
        "Tool errors are calls whose program failed, timed out or was refused; the model sees "
        "the error and may try again. Compare the Python-tools AIMO3 mode with the single-turn "
        "one above to see whether the tool helps."
    )
    waits = [r.budget_wait_s for row in rows for r in row.tool_calls if r.budget_wait_s]
    if waits:
        note += (
            f" {len(waits)} tool calls waited for room in the sandboxes' shared memory budget "
            f"(`memory_budget_mb`), {sum(waits):.1f} s in all."
        )
    return "## Tool use\n\n" + md_table(headers, body) + "\n\n" + note


# --------------------------------------------------------------------------- metadata


def _metadata_section(
    rows: Sequence[TraceRow], provenance: Mapping[str, str], prices: Mapping[str, str]
) -> str:
    """When and from what the results came: dates, commit, suite version, model settings,
    configured prices."""
    real = sorted(row.finished_at[:10] for row in rows if not row.simulated and row.finished_at)
    dates = f"{real[0]} to {real[-1]}" if real and real[0] != real[-1] else (real or ["—"])[0]
    lines = ["## Run metadata", ""]
    lines.append(
        f"- Rows finished (real models): {md_text(dates)}; simulated models keep no wall clock"
    )
    labels = {
        "git_commit": "Last commit of the code and settings (src/, configs/, data/, params.yaml)",
        "suite_version": "Suite version (digest of configs/ and data/)",
    }
    for key, label in labels.items():
        if provenance.get(key):
            lines.append(f"- {label}: {md_code(provenance[key])}")
    lines += ["", "Each model's settings (secret-named keys left out, values redacted):", ""]
    seen: dict[str, TraceRow] = {}
    for row in rows:
        seen.setdefault(row.model, row)
    for model, row in sorted(seen.items()):
        settings = {
            key: value
            for key, value in sorted((row.settings or {}).items())
            if value not in (None, {}, []) and key != "provider" and not is_secret_name(key)
        }
        shown = ", ".join(md_code(redact(f"{key}={value}")) for key, value in settings.items())
        lines.append(f"- **{escape(model)}** ({escape(row.provider)}): {shown or '—'}")
    if prices:
        heading = "Configured prices, USD per million tokens in / out (configs/models.yaml):"
        lines += ["", heading, ""]
        lines += [f"- **{escape(m)}**: {escape(redact(p))}" for m, p in sorted(prices.items())]
    return "\n".join(lines)
