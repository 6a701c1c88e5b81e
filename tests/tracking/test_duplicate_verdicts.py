"""Two clones scoring the same rows at once both write each verdict; the repair keeps one.

Clones that run the same model with the same settings make rows of the same keys, so their
traces are the same traces, and two `score` stages at once can each find no verdict and write
one. A later `track --scored` (in either clone, or both at once) must leave one current
verdict per trace, the same one whichever process repairs, and write nothing new.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from llm_eval.schemas import TraceRow
from llm_eval.tracking.assessments import FEEDBACK_NAME, log_verdicts
from llm_eval.tracking.identity import trace_id_of, trace_key
from tests.support.rows import make_row
from tests.tracking.test_sql_writes import api_only

pytestmark = pytest.mark.slow


def valid_verdicts(client: object, rows: list[TraceRow]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for row in rows:
        trace_id = trace_id_of(trace_key(row))
        trace = client.get_trace(trace_id)  # type: ignore[attr-defined]
        found[trace_id] = sorted(
            str(a.assessment_id)
            for a in trace.info.assessments
            if a.name == FEEDBACK_NAME and a.valid
        )
    return found


def current(client: object, rows: list[TraceRow]) -> dict[str, list[object]]:
    views: dict[str, list[object]] = {}
    for row in rows:
        trace_id = trace_id_of(trace_key(row))
        trace = client.get_trace(trace_id)  # type: ignore[attr-defined]
        views[trace_id] = [a for a in trace.info.assessments if a.name == FEEDBACK_NAME and a.valid]
    return views


@pytest.mark.parametrize("api", [False, True], ids=["sql writes", "MLflow API"])
def test_duplicate_verdicts_are_repaired_to_one_and_repairs_agree(
    api: bool, tmp_path: Path
) -> None:
    from mlflow import MlflowClient

    from llm_eval.tracking.bulk_traces import log_rows_as_traces

    rows = [make_row(task_id=f"t{i}", status="correct" if i % 2 else "incorrect") for i in range(3)]
    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'mlflow.db'}")
    with api_only(api):
        experiment = client.create_experiment("e")
        run = client.create_run(experiment)
        log_rows_as_traces(client, experiment, run.info.run_id, rows, shift_ns=[0, 0, 0])
        # Two clones' score stages at once: neither saw the other's verdict.
        assert log_verdicts(client, rows, {}).written == 3
        assert log_verdicts(client, rows, {}).written == 3
        assert all(len(ids) == 2 for ids in valid_verdicts(client, rows).values())
        seen = current(client, rows)

        repaired = log_verdicts(client, rows, seen)  # type: ignore[arg-type]
        assert (repaired.written, repaired.replaced) == (0, 3)
        kept = valid_verdicts(client, rows)
        assert all(len(ids) == 1 for ids in kept.values())
        assert all(ids[0] == min(str(a.assessment_id) for a in seen[t])  # type: ignore[attr-defined]
                   for t, ids in kept.items())  # fmt: skip
        # The other clone repairing from the same stale view keeps the same one, writes none.
        again = log_verdicts(client, rows, seen)  # type: ignore[arg-type]
        assert again.written == 0
        assert valid_verdicts(client, rows) == kept
