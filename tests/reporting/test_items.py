"""Item analysis over three models with planted disagreements: the report's suspected keys,
saturated count and separating share, and the same per-item table read back from a real
MLflow SQLite store after the real `llm-eval report`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from llm_eval.reporting import render_report
from llm_eval.reporting.items import item_analysis, rows_item_table
from llm_eval.reporting.tables import rows_frame
from llm_eval.runner.trace_io import write_rows
from llm_eval.schemas import TraceRow
from tests.conftest import REPO
from tests.support.rows import make_row

MODELS = ("mock-a", "mock-b", "mock-c")
RIGHT = "right"
# task -> (readers' difficulty, each model's answer: RIGHT or the wrong answer it extracts)
PLANTED: dict[str, tuple[str, tuple[str, str, str]]] = {
    "gm_001": ("easy", (RIGHT, RIGHT, RIGHT)),  # saturated
    "gm_002": ("easy", (RIGHT, RIGHT, RIGHT)),  # saturated
    "gm_003": ("easy", ("18:30", "18:30 ", "19:15")),  # suspected key: 18:30 twice
    "gm_004": ("hard", ("Τρίτη", "Πέμπτη", "Σάββατο")),  # unsolved, answers differ
    "gm_005": ("medium", (RIGHT, "Κώστας", RIGHT)),  # separating
    "gm_006": ("easy", ("Παρασκευή", RIGHT, "παρασκευη")),  # separating despite a shared answer
    "gm_007": ("hard", (RIGHT, "12", "12")),  # separating
}


def planted_rows() -> list[TraceRow]:
    rows = []
    for task, (level, answers) in PLANTED.items():
        for model, answer in zip(MODELS, answers, strict=True):
            status = "correct" if answer == RIGHT else "incorrect"
            rows.append(make_row(model=model, benchmark="greek_messages", task_id=task,
                                 status=status, answer="key", scorer="language",
                                 extracted=None if answer == RIGHT else answer,
                                 difficulty=level))  # fmt: skip
    return rows


def test_items_are_saturated_unsolved_or_separating_and_shared_wrong_answers_flag_keys() -> None:
    items = {item.task_id: item for item in item_analysis(rows_frame(planted_rows()))}
    assert {t for t, i in items.items() if i.kind == "saturated"} == {"gm_001", "gm_002"}
    assert {t for t, i in items.items() if i.kind == "unsolved"} == {"gm_003", "gm_004"}
    assert [t for t, i in items.items() if i.suspected_key] == ["gm_003"]
    assert items["gm_003"].shared_wrong_answer == "18:30" and items["gm_003"].shared_wrong_by == 2
    assert items["gm_006"].shared_wrong_by == 2 and not items["gm_006"].suspected_key
    assert items["gm_005"].models_right == 2 and items["gm_005"].right_share == pytest.approx(2 / 3)


def test_one_model_with_one_epoch_has_no_item_analysis() -> None:
    rows = [row for row in planted_rows() if row.model == "mock-a"]
    assert rows_item_table(rows) is None
    assert "Items that still separate the models" not in render_report(rows, title="t")


def test_epochs_of_one_model_are_compared_like_models() -> None:
    rows = [make_row(model="m", benchmark="greek_messages", task_id="gm_001", epoch=epoch,
                     status="incorrect", extracted="7") for epoch in (0, 1)]  # fmt: skip
    rows.append(make_row(model="m", benchmark="greek_messages", task_id="gm_002", epoch=0))
    rows.append(make_row(model="m", benchmark="greek_messages", task_id="gm_002", epoch=1,
                         status="incorrect"))  # fmt: skip
    (unsolved, separating) = item_analysis(rows_frame(rows))
    assert unsolved.suspected_key and separating.kind == "separating"
    assert "in 2 of 2 epochs" in render_report(rows, title="t")


def test_the_report_lists_suspected_keys_saturated_count_and_separating_share() -> None:
    text = render_report(planted_rows(), title="t")
    part = text[text.index("### Items that still separate the models") :]
    line = next(row for row in part.splitlines() if row.startswith("| greek_messages |"))
    cells = [cell.strip() for cell in line.strip("|").split("|")]
    assert cells[:6] == ["greek_messages", "7", "2", "2", "3", "42.9%"]
    assert cells[6].endswith(" pp") or cells[6] == "—"
    assert "**Suspected keys** (1)" in part
    assert "- greek_messages gm_003: `18:30` from 2 of 3 models" in part
    assert "Unsolved without a shared wrong answer (1): gm_004" in part
    assert "Saturated items, every answer right (2)" in part
    hard = next(row for row in part.splitlines() if row.startswith("| hard |"))
    assert [c.strip() for c in hard.strip("|").split("|")] == ["hard", "2", "16.7%", "0", "1", "1"]


@pytest.mark.slow
def test_the_report_stage_logs_the_item_table_to_mlflow(tmp_path: Path) -> None:
    from mlflow import MlflowClient

    from tests.tracking.test_tracking import llm_eval

    root = tmp_path / "repo"
    root.mkdir()
    for folder in ("configs", "data"):
        shutil.copytree(REPO / folder, root / folder)
    shutil.copy(REPO / "params.yaml", root / "params.yaml")
    write_rows(root / "rows.jsonl", planted_rows())
    made = llm_eval(root, "report", "--results", "rows.jsonl", "--output", "report.md")
    assert made.returncode == 0, made.stdout + made.stderr
    assert "warning" not in made.stderr.lower(), made.stderr
    assert "**Suspected keys** (1)" in (root / "report.md").read_text(encoding="utf-8")
    client = MlflowClient(tracking_uri=f"sqlite:///{root / 'mlruns' / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("llm-eval")
    assert experiment is not None
    (report,) = [r for r in client.search_runs([experiment.experiment_id])
                 if r.info.run_name.split(" @ ")[0] == "report"]  # fmt: skip
    local = client.download_artifacts(report.info.run_id, "items/item_analysis.json")
    table = json.loads(Path(local).read_text(encoding="utf-8"))
    logged = [dict(zip(table["columns"], row, strict=True)) for row in table["data"]]
    assert logged == [dict(zip(rows_item_table(planted_rows()) or {}, values, strict=True))
                      for values in zip(*(rows_item_table(planted_rows()) or {}).values(),
                                        strict=True)]  # fmt: skip
    by_task = {row["task_id"]: row for row in logged}
    assert by_task["gm_003"]["suspected_key"] is True
    assert by_task["gm_003"]["shared_wrong_answer"] == "18:30"
    assert by_task["gm_004"]["difficulty"] == "hard"
    assert sum(row["kind"] == "saturated" for row in logged) == 2
