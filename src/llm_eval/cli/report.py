"""`llm-eval report`: Markdown report and SVG charts from one or more trace files."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from llm_eval.errors import UsageError
from llm_eval.redaction import redact
from llm_eval.reporting.task_check import checked_rows
from llm_eval.runner.trace_io import dump_json, read_many
from llm_eval.schemas import TraceRow

if TYPE_CHECKING:
    from llm_eval.config.validation import ValidationReport
    from llm_eval.reporting.plan import RunPlan
    from llm_eval.runner.run_record import CapInfo

PIPELINE_REPORT = Path("reports/report.md")
PIPELINE_CHARTS = Path("docs/images")
ITEM_TABLE = "items/item_analysis.json"
"""Where the report stage's run keeps the per-item table in MLflow."""


def default_destinations(
    results: list[Path], output: Path | None, charts_dir: Path | None
) -> tuple[Path, Path]:
    """Where the report and its charts go when not told: beside the first results file.

    `--results DIR/NAME.jsonl` writes `DIR/NAME-report.md` and `DIR/NAME-charts/`, so a
    report of one run never replaces the pipeline's committed report and charts; only
    `--from-params` alone (the pipeline's own report) defaults to those.
    """
    if output is None:
        output = (
            results[0].with_name(results[0].stem + "-report.md") if results else PIPELINE_REPORT
        )
    if charts_dir is None:
        if output == PIPELINE_REPORT and not results:
            charts_dir = PIPELINE_CHARTS
        else:
            charts_dir = output.with_name(output.stem.removesuffix("-report") + "-charts")
    return output, charts_dir


def suite_facts(
    config_root: Path, report: ValidationReport | None = None
) -> tuple[dict[str, int], dict[str, str]] | None:
    """From the config (`report`, validated from `config_root` if not given): task counts per
    benchmark (to spot missing rows) and each priced model's configured prices with their
    source; None if there is no valid config."""
    if report is None:
        from llm_eval.config.validation import validate

        report = validate(str(config_root))
    if report.config is None:
        return None
    prices = {
        name: f"${model.input_cost_per_mtok:g} / ${model.output_cost_per_mtok:g}"
        + (f" ({redact(model.price_source)})" if model.price_source else "")
        for name, model in report.config.models.items()
        if model.input_cost_per_mtok is not None and model.output_cost_per_mtok is not None
    }
    return dict(report.task_counts), prices


def execute_report(
    results: list[Path],
    output: Path,
    charts_dir: Path | None,
    title: str,
    config_root: Path,
    summary: Path | None = None,
    plots_data: Path | None = None,
) -> int:
    """Read rows, render charts (optional) and the Markdown report."""
    from llm_eval.config.validation import validate
    from llm_eval.reporting.markdown import render_report

    for path in results:
        if not path.is_file():
            raise UsageError(f"--results: no such file {path}")
    rows = read_many(results)
    if not rows:
        raise UsageError("--results: the given files hold no rows")
    # Rows of deleted tasks and of changed questions are left out of every figure below.
    suite = validate(str(config_root))
    rows, plan = checked_rows(rows, suite.questions, run_plan(results))
    chart_paths: dict[str, str] | None = None
    if charts_dir is not None:
        from llm_eval.reporting.charts import render_charts

        written = render_charts(rows, charts_dir)
        chart_paths = {
            name: os.path.relpath(path, output.parent.resolve()) for name, path in written.items()
        }
    facts = suite_facts(config_root, suite)
    present = {row.benchmark for row in rows}
    models = {row.model for row in rows}
    text = render_report(
        rows,
        title=title,
        chart_paths=chart_paths,
        expected_tasks={b: n for b, n in facts[0].items() if b in present} if facts else None,
        provenance=provenance(config_root),
        prices={m: p for m, p in facts[1].items() if m in models} if facts else None,
        plan=plan,
    )
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text, encoding="utf-8")
    print(f"wrote {output} ({len(rows)} rows)")
    charts = [output.parent / p for p in (chart_paths or {}).values()]
    if plots_data is not None:
        from llm_eval.reporting.metrics import write_plot_data

        write_plot_data(plots_data, rows)
    _track_report(rows, output, charts, summary, config_root)
    return 0


def run_plan(results: list[Path]) -> RunPlan | None:
    """The plans and stops of the run records beside `results` (None if none has one)."""
    from llm_eval.reporting.plan import RunPlan, StopNote
    from llm_eval.runner.run_record import merged_plan, read_record

    planned: dict[str, dict[str, int]] = {}
    stops: list[StopNote] = []
    found = False
    for path in results:
        record = read_record(path)
        if record is None:
            continue
        found = True
        planned = merged_plan(planned, record.planned)
        if record.stop is not None:
            stop = record.stop
            stops.append(StopNote(str(path), stop.kind, stop.detail, stop.at,
                                  record.resume_command))  # fmt: skip
        elif record.caps is not None and (record.caps.over_cost_usd or record.caps.over_tokens):
            stops.append(StopNote(str(path), "overshoot", _overshoot(record.caps), ""))
    return RunPlan(planned, stops) if found else None


def _overshoot(caps: CapInfo) -> str:
    """How far past its caps a complete run went, and why it could."""
    over = []
    if caps.over_cost_usd:
        over.append(f"${caps.over_cost_usd:.4f} over --max-cost ${caps.max_cost_usd}")
    if caps.over_tokens:
        over.append(
            f"{caps.over_tokens:,} tokens over --max-total-tokens {caps.max_total_tokens:,}"
        )
    n = caps.calls_in_flight_at_cap
    return f"{' and '.join(over)}: {n} {'call' if n == 1 else 'calls'} in flight at the cap"


PROVENANCE_PATHS = ("src", "configs", "data", "params.yaml", "dvc.yaml")


def provenance(config_root: Path) -> dict[str, str]:
    """The last commit of the code and settings, and a digest of the suite (configs/, data/)."""
    import hashlib

    from llm_eval.tracking.context import git_output

    found: dict[str, str] = {}
    # The last commit that changed what results depend on, not HEAD: committing the results
    # themselves must not change the report that describes them.
    commit = git_output(config_root, "log", "-1", "--format=%h", "--abbrev=12", "--",
                        *PROVENANCE_PATHS)  # fmt: skip
    if commit:
        found["git_commit"] = commit
    digest = hashlib.sha256()
    for folder in ("configs", "data"):
        for path in sorted((config_root / folder).rglob("*")):
            if path.is_file():
                digest.update(path.relative_to(config_root).as_posix().encode())
                digest.update(path.read_bytes())
    found["suite_version"] = digest.hexdigest()[:12]
    return found


def _track_report(
    rows: list[TraceRow], report: Path, charts: list[Path], summary: Path | None, config_root: Path
) -> None:
    """Write the per-model summary metrics (if asked), then track the `report` stage."""
    from llm_eval.reporting.metrics import compared_metrics, summary_metrics
    from llm_eval.tracking import track_stage, tracking_enabled

    metrics = summary_metrics(rows)
    if summary is not None:
        dump_json(summary, compared_metrics(metrics))
    artifacts = [report, *charts, *([summary] if summary is not None else [])]
    models = list(dict.fromkeys(row.model for row in rows))
    tables: dict[str, dict[str, list[object]]] = {}
    if tracking_enabled(config_root):
        from llm_eval.reporting.items import rows_item_table

        items = rows_item_table(rows)
        tables = {ITEM_TABLE: items} if items is not None else {}
    track_stage("report", config_root=config_root, artifacts=artifacts, metrics=metrics,
                models=models, tables=tables)  # fmt: skip
