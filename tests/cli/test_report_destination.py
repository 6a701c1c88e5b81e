"""`llm-eval report --results DIR/NAME.jsonl` writes beside its results, never over the
pipeline's committed report and charts."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.conftest import REPO
from tests.support.cli import llm_eval
from tests.support.rows import make_row


def _published(root: Path) -> dict[str, bytes]:
    paths = [root / "reports" / "report.md", *sorted((root / "docs" / "images").glob("*.svg"))]
    return {str(path.relative_to(root)): path.read_bytes() for path in paths}


def test_report_of_one_run_goes_beside_it(config_copy: Path) -> None:
    root = config_copy
    shutil.copytree(REPO / "reports", root / "reports")
    shutil.copytree(REPO / "docs" / "images", root / "docs" / "images")
    before = _published(root)
    assert len(before) > 1
    results = root / "runs" / "smoke.jsonl"
    results.parent.mkdir()
    rows = [make_row(model="m", benchmark="language_understanding", task_id=f"t{i}")
            for i in range(3)]  # fmt: skip
    results.write_text("".join(row.model_dump_json() + "\n" for row in rows), encoding="utf-8")

    made = llm_eval("report", "--results", "runs/smoke.jsonl", "--config-root", str(root), cwd=root)

    assert made.returncode == 0, made.stderr
    report = root / "runs" / "smoke-report.md"
    charts = sorted(path.name for path in (root / "runs" / "smoke-charts").glob("*.svg"))
    assert "language-accuracy.svg" in charts
    assert "](smoke-charts/language-accuracy.svg)" in report.read_text(encoding="utf-8")
    assert _published(root) == before  # the committed report and SVGs are untouched


def test_output_names_the_report_and_its_charts_follow_it(config_copy: Path) -> None:
    results = config_copy / "smoke.jsonl"
    results.write_text(make_row(model="m", benchmark="sample_math").model_dump_json() + "\n")
    made = llm_eval("report", "--results", str(results), "--output", "out/summary.md",
                    "--config-root", str(config_copy), cwd=config_copy)  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert (config_copy / "out" / "summary.md").is_file()
    assert list((config_copy / "out" / "summary-charts").glob("*.svg"))
