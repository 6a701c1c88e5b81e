"""One set of figures for rows with unsure verdicts: the accuracy, its band and the unsure count
read back from MLflow (the `score` and `report` runs), from `dvc metrics show`, from the
Markdown report and from the charts agree.

The rows are scored already (unsure verdicts included), so the `score` stage's tracking is
called the way `llm-eval score` calls it after scoring; the report is the real CLI.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from llm_eval.reporting.md_format import fmt_band, fmt_pct
from llm_eval.reporting.metrics import benchmark_metrics, headline_metrics
from llm_eval.runner.trace_io import dump_json, write_rows
from tests.conftest import REPO
from tests.reporting.test_report_band import LANGUAGE, alpha_rows, beta_rows
from tests.tracking.test_tracking import cli_env, llm_eval

pytestmark = pytest.mark.slow

TRACK_SCORE = """
import sys
from pathlib import Path
from llm_eval.tracking import prepare_tracking, track_stage
root = Path(sys.argv[1])
assert prepare_tracking(root)
track_stage("score", config_root=root, rows_paths=[root / "a.jsonl"],
            artifacts=[root / "m.json", root / "d.json"])
"""


@dataclass
class Figures:
    """Everything each consumer was given, read back from where it lives."""

    score_run: dict[str, float]
    report_run: dict[str, float]
    parent_run: dict[str, float]
    dvc_metrics: dict[str, Any]
    report: str
    charts: dict[str, str]


@pytest.fixture(scope="module")
def figures(tmp_path_factory: pytest.TempPathFactory) -> Figures:
    from mlflow import MlflowClient

    root = tmp_path_factory.mktemp("band") / "repo"
    root.mkdir()
    for folder in ("configs", "data"):
        shutil.copytree(REPO / folder, root / folder)
    shutil.copy(REPO / "params.yaml", root / "params.yaml")
    alpha = alpha_rows()
    write_rows(root / "a.jsonl", alpha)
    write_rows(root / "b.jsonl", beta_rows())
    details = benchmark_metrics(alpha)  # what `llm-eval score` writes after scoring
    dump_json(root / "m.json", headline_metrics(alpha, details["overall"]))
    dump_json(root / "d.json", details)
    scored = subprocess.run([sys.executable, "-c", TRACK_SCORE, str(root)], cwd=root,
                            env=cli_env(), capture_output=True, text=True, timeout=300)  # fmt: skip
    assert scored.returncode == 0 and "warning" not in scored.stderr.lower(), scored.stderr
    made = llm_eval(root, "report", "--results", "a.jsonl", "--results", "b.jsonl",
                    "--output", "report.md", "--charts-dir", "charts", "--summary",
                    "summary.json")  # fmt: skip
    assert made.returncode == 0, made.stdout + made.stderr
    assert "warning" not in made.stderr.lower(), made.stderr
    client = MlflowClient(tracking_uri=f"sqlite:///{root / 'mlruns' / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("llm-eval")
    assert experiment is not None
    runs = {  # `<stage>:<model> @ <label>`: the label tells pipeline executions apart
        r.info.run_name.split(" @ ")[0]: r for r in client.search_runs([experiment.experiment_id])
    }
    pipeline = [r for name, r in runs.items() if name not in ("score:a", "report")]
    assert len(pipeline) == 1, list(runs)
    return Figures(
        score_run=runs["score:a"].data.metrics,
        report_run=runs["report"].data.metrics,
        parent_run=pipeline[0].data.metrics,
        dvc_metrics=_dvc_metrics(root),
        report=(root / "report.md").read_text(encoding="utf-8"),
        charts={p.stem: p.read_text(encoding="utf-8") for p in (root / "charts").glob("*.svg")},
    )


def _dvc_metrics(root: Path) -> dict[str, Any]:
    """`dvc metrics show --json` on a repository declaring summary.json as its metrics."""
    env = cli_env(DVC_NO_ANALYTICS="1")

    def run(*args: str) -> str:
        done = subprocess.run(args, cwd=root, env=env, capture_output=True, text=True,
                              timeout=300)  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    run("git", "init", "-q")
    run(sys.executable, "-m", "dvc", "init", "-q")
    (root / "dvc.yaml").write_text("metrics:\n  - summary.json\n", encoding="utf-8")
    shown = json.loads(run(sys.executable, "-m", "dvc", "metrics", "show", "--json"))
    return dict(shown[""]["data"]["summary.json"]["data"])


def test_mlflow_and_dvc_carry_the_same_headline(figures: Figures) -> None:
    alpha, beta = figures.dvc_metrics["a"], figures.dvc_metrics["b"]
    # 29 / 50 sure right; 39 / 50 were the 10 unsure rows right
    assert alpha["strict_accuracy"] == 0.58 and alpha["strict_accuracy_high"] == 0.78
    assert beta["strict_accuracy_high"] == beta["strict_accuracy"]
    for key in ("strict_accuracy", "strict_accuracy_high", "strict_ci_low", "strict_ci_high"):
        assert figures.score_run[key] == pytest.approx(alpha[key]), key
        for model, headline in figures.dvc_metrics.items():
            assert figures.report_run[f"{model}/{key}"] == pytest.approx(headline[key])
            assert figures.parent_run[f"{model}/{key}"] == pytest.approx(headline[key])
    # The counts are not DVC metrics (summary.json stays narrow); MLflow carries them.
    assert "unsure" not in alpha
    assert figures.score_run["unsure"] == 10 and figures.report_run["b/unsure"] == 0
    assert figures.score_run[f"{LANGUAGE}/unsure"] == 10
    assert figures.score_run[f"{LANGUAGE}/strict_accuracy_high"] == pytest.approx(0.75)
    assert figures.score_run["overall/valid_accuracy_high"] == pytest.approx(39 / 49, abs=1e-6)


def test_the_report_shows_the_figures_dvc_and_mlflow_hold(figures: Figures) -> None:
    summary = figures.report[figures.report.index("## Full-suite summary") :]
    for model, label in (("a", "Alpha"), ("b", "Beta")):
        headline = figures.dvc_metrics[model]
        line = next(row for row in summary.splitlines() if row.startswith(f"| {label} |"))
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        assert cells[2].startswith(fmt_pct(headline["strict_accuracy"]) + " [")
        assert cells[3] == str(int(figures.report_run[f"{model}/unsure"]))
        assert cells[4] == fmt_band(headline["strict_accuracy"], headline["strict_accuracy_high"])
    band = fmt_band(figures.score_run["strict_accuracy"], figures.score_run["strict_accuracy_high"])
    assert f"strict accuracy, {band} as its 10 unsure rows" in figures.report


def test_the_charts_show_the_figures_dvc_and_mlflow_hold(figures: Figures) -> None:
    low = figures.score_run[f"{LANGUAGE}/strict_accuracy"]
    high = figures.score_run[f"{LANGUAGE}/strict_accuracy_high"]
    unsure = int(figures.score_run[f"{LANGUAGE}/unsure"])
    assert f"{fmt_band(low, high)} with {unsure} unsure" in figures.charts["language-accuracy"]
    heat = f"{100 * low:.0f}–{100 * high:.0f}%: {unsure} unsure"
    assert heat in figures.charts["benchmark-heatmap"]
