"""`llm-eval track --check --scored` compares every stored verdict with the scored file.

A real run and score write a real SQLite store; the checks then run against files whose
verdicts were changed, and against a store whose verdict was flipped through MLflow's own
`update_assessment`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from llm_eval.runner.trace_io import read_rows, write_rows
from llm_eval.schemas import TraceRow
from tests.tracking.test_tracking import llm_eval, make_suite

pytestmark = pytest.mark.slow


@dataclass
class Scored:
    root: Path
    rows: list[TraceRow]


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scored]:
    root = make_suite(tmp_path_factory.mktemp("check") / "suite")
    ran = llm_eval(root, "run", "--model", "mock-varied", "--benchmark", "sample_logic",
                   "--output", "t.jsonl")  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    done = llm_eval(root, "score", "--results", "t.jsonl", "--output", "s.jsonl")
    assert done.returncode == 0, done.stderr
    yield Scored(root, read_rows(root / "s.jsonl"))


def flipped(row: TraceRow) -> TraceRow:
    """The row with the opposite verdict (an error row stays as it is)."""
    if row.score is None or row.status == "error":
        return row
    verdict = "incorrect" if row.status == "correct" else "correct"
    score = row.score.model_copy(update={"verdict": verdict, "correct": verdict == "correct"})
    return row.model_copy(update={"status": verdict, "score": score})


def test_the_check_passes_on_the_file_it_recorded(scored: Scored) -> None:
    check = llm_eval(scored.root, "track", "s.jsonl", "--scored", "--check")
    assert check.returncode == 0, check.stdout + check.stderr
    assert "0 verdict(s) differ from the file" in check.stdout
    assert check.stdout.strip().endswith(": OK")


def test_every_verdict_contradicting_the_file_fails_the_check(scored: Scored) -> None:
    changed = [flipped(row) for row in scored.rows]
    differ = sum(a.status != b.status for a, b in zip(scored.rows, changed, strict=True))
    assert differ >= 4
    write_rows(scored.root / "contradicted.jsonl", changed)
    check = llm_eval(scored.root, "track", "contradicted.jsonl", "--scored", "--check")
    assert check.returncode == 1, check.stdout + check.stderr
    assert f"{differ} verdict(s) differ from the file" in check.stdout
    assert not check.stdout.strip().endswith(": OK")


def test_a_stored_verdict_flipped_by_hand_fails_the_check(scored: Scored) -> None:
    import mlflow
    from mlflow import MlflowClient
    from mlflow.entities import Feedback

    from llm_eval.tracking.identity import trace_id_of, trace_key

    uri = f"sqlite:///{scored.root / 'mlruns' / 'mlflow.db'}"
    row = next(r for r in scored.rows if r.status in ("correct", "incorrect"))
    trace_id = trace_id_of(trace_key(row))
    trace = MlflowClient(tracking_uri=uri).get_trace(trace_id)
    (verdict,) = [a for a in trace.info.assessments if a.name == "correct" and a.valid]
    mlflow.set_tracking_uri(uri)
    try:
        mlflow.update_assessment(
            trace_id,
            verdict.assessment_id,
            Feedback(name="correct", value=row.status != "correct"),
        )
    finally:
        mlflow.set_tracking_uri(None)  # type: ignore[arg-type]
    check = llm_eval(scored.root, "track", "s.jsonl", "--scored", "--check")
    assert check.returncode == 1, check.stdout + check.stderr
    assert "1 verdict(s) differ from the file" in check.stdout
    # Writing the file's verdicts again repairs the record.
    repair = llm_eval(scored.root, "track", "s.jsonl", "--scored")
    assert repair.returncode == 0, repair.stdout + repair.stderr
    assert "0 verdict(s) differ from the file" in repair.stdout
