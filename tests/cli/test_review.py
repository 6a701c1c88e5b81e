"""`llm-eval review` end to end: a person settles unsure rows in the terminal, `score` applies
the decisions, MLflow holds them as HUMAN verdicts, a verdict added in MLflow is pulled back,
and `track --check` accepts a person's verdict beside the scorer's.

The command line runs in this process (Typer's runner, scripted stdin) so that a scorer
registered by the tests can leave rows unsure; MLflow is a real SQLite store read back through
`MlflowClient`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from llm_eval.cli.app import app
from llm_eval.runner.trace_io import read_rows, write_rows
from llm_eval.schemas import TraceRow
from llm_eval.scoring.reviews import REVIEWS_FILE, reply_digest
from llm_eval.tracking.identity import trace_id_of, trace_key
from tests.support.unsure_scorer import unscored_row

pytestmark = pytest.mark.slow

HEDGE = "maybe 42, or perhaps 24"
OTHER_HEDGE = "42? maybe not"


@pytest.fixture()
def tracked(monkeypatch: pytest.MonkeyPatch, config_copy: Path) -> Iterator[Path]:
    for name in ("MLFLOW_TRACKING_URI", "DVC_ROOT", "DVC_EXP_NAME", "DVC_STAGE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LLM_EVAL_TRACKING", "1")
    monkeypatch.setenv("USER", "tester")
    yield config_copy


def invoke(root: Path, *args: str, stdin: str | None = None) -> Result:
    result = CliRunner().invoke(app, [*args, "--config-root", str(root)], input=stdin)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


def client_for(root: Path) -> Any:
    from mlflow import MlflowClient

    return MlflowClient(tracking_uri=f"sqlite:///{root / 'mlruns' / 'mlflow.db'}")


def correct_verdicts(root: Path, row: TraceRow) -> list[Any]:
    trace = client_for(root).get_trace(trace_id_of(trace_key(row)))
    return [a for a in trace.info.assessments if a.name == "correct" and a.valid]


def by_source(assessments: list[Any], kind: str) -> list[Any]:
    return [a for a in assessments if a.source.source_type == kind]


def test_review_walk_rescore_mlflow_pull_and_track_check(tracked: Path) -> None:
    root = tracked
    traces, scored = root / "t.jsonl", root / "s.jsonl"
    write_rows(
        traces,
        [
            unscored_row("m1", "t1", HEDGE),
            unscored_row("m2", "t1", f"  {HEDGE}\n"),  # the same reply, another model
            unscored_row("m1", "t2", OTHER_HEDGE),
            unscored_row("m1", "t3", "42"),
        ],
    )
    first = invoke(root, "score", "--results", str(traces), "--output", str(scored))
    assert first.exit_code == 0, first.output
    assert [row.status for row in read_rows(scored)] == ["unsure", "unsure", "unsure", "correct"]

    # The walk: a typo is asked again, the shared reply once, the second one skipped.
    walk = invoke(
        root, "review", "--results", str(scored), "--reviewer", "alice",
        stdin="x\nr the 24 is a slip\ns\n",
    )  # fmt: skip
    assert walk.exit_code == 0, walk.output
    assert "2 unsure repl(ies) to review" in walk.output
    assert "the same reply in 1 other row(s)" in walk.output
    assert "Expected: 42" in walk.output and "Known wrong (decoys): 24" in walk.output
    assert "Scorer: unsure (hedge) by maybe" in walk.output
    assert "answer r (right), w (wrong), s (skip) or q (quit)" in walk.output
    assert "1 right, 0 wrong, 1 skipped, 0 not reached" in walk.output
    lines = (root / REVIEWS_FILE).read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1
    decision = json.loads(lines[0])
    assert decision == {
        "benchmark": "b", "task_id": "t1", "answer": "42", "reply_sha256": reply_digest(HEDGE),
        "timestamp": decision["timestamp"], "verdict": "correct", "reviewer": "alice",
        "note": "the 24 is a slip", "via": "terminal",
    }  # fmt: skip

    again = invoke(root, "review", "--results", str(scored), stdin="q\n")
    assert "1 unsure repl(ies) to review" in again.output and "as 'tester'" in again.output
    assert OTHER_HEDGE in again.output

    rescore = invoke(root, "score", "--results", str(scored))
    assert rescore.exit_code == 0, rescore.output
    # The test benchmark `b` is in no task file: only that warning may show.
    warnings = [line for line in rescore.output.splitlines() if "warning" in line.lower()]
    assert all("no longer in the task files" in line for line in warnings), rescore.output
    rows = read_rows(scored)
    assert [row.status for row in rows] == ["correct", "correct", "unsure", "correct"]
    reviewed = rows[0].score
    assert reviewed is not None
    assert (reviewed.source, reviewed.decided_by, reviewed.method) == ("human", "alice", "maybe")
    assert reviewed.unsure_reason == "hedge" and reviewed.decision_note == "the 24 is a slip"

    for row in rows[:2]:  # both rows of the reply carry the person's verdict in MLflow
        verdicts = correct_verdicts(root, row)
        (human,) = by_source(verdicts, "HUMAN")
        assert human.value is True and human.source.source_id == "alice"
        assert "the 24 is a slip" in human.rationale
        (rule,) = by_source(verdicts, "CODE")
        assert rule.value is True
    check = invoke(root, "track", str(scored), "--scored", "--check")
    assert check.exit_code == 0, check.output
    assert check.output.strip().endswith(": OK")

    # A person marks the other reply wrong in the MLflow UI.
    from mlflow.entities import AssessmentSource, AssessmentSourceType, Feedback
    from mlflow.tracing.client import TracingClient

    TracingClient(f"sqlite:///{root / 'mlruns' / 'mlflow.db'}").log_assessment(
        trace_id_of(trace_key(rows[2])),
        Feedback(
            name="correct",
            value=False,
            rationale="two answers",
            source=AssessmentSource(source_type=AssessmentSourceType.HUMAN, source_id="bob"),
        ),
    )
    unpulled = invoke(root, "track", str(scored), "--scored", "--check")
    assert unpulled.exit_code == 1
    assert "1 human verdict(s) not in the reviews file" in unpulled.output
    pull = invoke(root, "review", "--results", str(scored), "--from-mlflow")
    assert pull.exit_code == 0, pull.output
    assert "1 verdict(s) pulled from MLflow" in pull.output
    pulled = json.loads((root / REVIEWS_FILE).read_text(encoding="utf-8").splitlines()[-1])
    assert (pulled["task_id"], pulled["verdict"], pulled["reviewer"], pulled["via"]) == (
        "t2", "incorrect", "bob", "mlflow"
    )  # fmt: skip
    assert pulled["note"] == "two answers"
    nothing_new = invoke(root, "review", "--results", str(scored), "--from-mlflow")
    assert "0 verdict(s) pulled" in nothing_new.output

    final = invoke(root, "score", "--results", str(scored))
    assert final.exit_code == 0, final.output
    statuses = [row.status for row in read_rows(scored)]
    assert statuses == ["correct", "correct", "incorrect", "correct"]
    (bobs,) = by_source(correct_verdicts(root, rows[2]), "HUMAN")
    assert bobs.source.source_id == "bob"  # the person's own verdict is kept, not duplicated
    done = invoke(root, "track", str(scored), "--scored", "--check")
    assert done.exit_code == 0, done.output


def test_a_bad_line_in_the_reviews_file_stops_score_at_that_line(config_copy: Path) -> None:
    from tests.support.cli import llm_eval
    from tests.support.rows import make_row

    write_rows(config_copy / "t.jsonl", [make_row()])
    reviews = config_copy / REVIEWS_FILE
    reviews.parent.mkdir()
    reviews.write_text('\n{"benchmark": "b"\n', encoding="utf-8")
    done = llm_eval("score", "--results", "t.jsonl", cwd=config_copy)
    assert done.returncode == 1
    assert done.stderr.strip() == f"{Path('reviews') / 'verdicts.jsonl'}:2: not JSON: " + (
        "Expecting ',' delimiter"
    )
