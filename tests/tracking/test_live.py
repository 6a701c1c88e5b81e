"""Live trace logging: rows handed to a child process during the run become MLflow traces."""

from __future__ import annotations

import io
import os
import threading
import time
from pathlib import Path

import pytest

from llm_eval.tracking import live


def test_a_backlog_goes_in_batches_of_at_most_the_backlog_size(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(live, "BATCH_ROWS", 3)
    monkeypatch.setattr(live, "BACKLOG_ROWS", 5)

    class Waiting(io.StringIO):
        """All lines arrive before the first batch is taken: a child that fell behind."""

        def __iter__(self):  # type: ignore[override]
            yield from (f'{{"n": {i}}}\n' for i in range(12))

    sizes = []
    for batch in live.batches(Waiting()):
        time.sleep(0.05)  # the reader thread queues everything meanwhile
        sizes.append(len(batch))
    assert sum(sizes) == 12
    assert max(sizes) <= 5 and sizes[0] >= 3
    assert len(sizes) <= 3


def test_batches_are_full_when_rows_trickle_in(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(live, "BATCH_ROWS", 3)

    class Trickle(io.StringIO):
        def __iter__(self):  # type: ignore[override]
            for i in range(7):
                time.sleep(0.02)  # each line after the previous one was taken
                yield f'{{"n": {i}}}\n'

    sizes = [len(batch) for batch in live.batches(Trickle())]
    assert sizes == [3, 3, 1]


def test_a_partial_batch_is_written_after_the_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(live, "BATCH_WAIT_S", 0.2)

    first_batch_taken = threading.Event()

    class Slow(io.StringIO):
        def __iter__(self):  # type: ignore[override]
            yield '{"n": 1}\n'
            # The second row waits until the first went out on its own: only the batch wait
            # can release it, so a batcher that waited for a full batch would fail here.
            first_batch_taken.wait(timeout=30)
            yield '{"n": 2}\n'

    sizes = []
    for batch in live.batches(Slow()):
        sizes.append(len(batch))
        first_batch_taken.set()
    assert sizes == [1, 1]


def test_an_error_row_is_a_failed_trace_with_an_error_assessment(tmp_path: Path) -> None:
    """Real SQLite store, read back through MlflowClient: verdicts and errors on traces."""
    from mlflow import MlflowClient

    from llm_eval.tracking.assessments import log_verdicts
    from llm_eval.tracking.bulk_traces import log_rows_as_traces
    from llm_eval.tracking.store import global_tracking_uri
    from tests.support.rows import make_row

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    rows = [
        make_row(model="m", benchmark="b", task_id="ok", status="correct", answer="42"),
        make_row(model="m", benchmark="b", task_id="bad", status="error",
                 error_kind="timeout", error_message="no reply within 120 s"),
    ]  # fmt: skip
    with global_tracking_uri(uri):
        client = MlflowClient(tracking_uri=uri)
        experiment = client.create_experiment("e", artifact_location=(tmp_path / "a").as_uri())
        run = client.create_run(experiment, tags={"llm_eval.stage": "run", "llm_eval.model": "m"})
        log_rows_as_traces(client, experiment, run.info.run_id, rows)
        assert log_verdicts(client, experiment, "m", rows) == 2
        traces = client.search_traces(locations=[experiment], run_id=run.info.run_id)
    by_task = {trace.info.tags["llm_eval.task_id"]: trace for trace in traces}
    assert by_task["ok"].info.state == "OK" and by_task["bad"].info.state == "ERROR"
    (right,) = by_task["ok"].info.assessments
    assert right.name == "correct" and right.value is True
    (failed,) = by_task["bad"].info.assessments
    assert failed.value is None and failed.error.error_code == "timeout"


@pytest.mark.slow
@pytest.mark.parametrize("finished", [True, False])
def test_the_child_logs_the_stage_only_for_a_finished_run(
    config_copy: Path, monkeypatch: pytest.MonkeyPatch, finished: bool
) -> None:
    """A real child process and SQLite store: traces always, the stage's metrics and table
    only when the run finished (an interrupted run's file is not a result)."""
    from mlflow import MlflowClient

    from tests.support.rows import make_row

    for name in [name for name in os.environ if name.startswith(("MLFLOW_", "DVC_"))]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("LLM_EVAL_TRACKING", "1")
    rows = [make_row(model="mock-varied", benchmark="sample_logic", task_id=f"t{i}")
            for i in range(3)]  # fmt: skip
    trace_file = config_copy / "t.jsonl"
    trace_file.write_text("".join(row.model_dump_json() + "\n" for row in rows), "utf-8")
    child = live.LiveTraces(config_copy, trace_file)
    for row in rows:
        child.add(row)
    assert child.close(log_stage=finished) is finished

    client = MlflowClient(tracking_uri=f"sqlite:///{config_copy / 'mlruns' / 'mlflow.db'}")
    (experiment,) = [e for e in client.search_experiments() if e.name != "Default"]
    runs = client.search_runs([experiment.experiment_id], "tags.`llm_eval.model` = 'mock-varied'")
    (run,) = runs
    traces = client.search_traces(locations=[experiment.experiment_id], run_id=run.info.run_id)
    assert len(traces) == 3
    assert ("strict_accuracy" in run.data.metrics) is finished
    assert (run.data.tags.get("llm_eval.traces") == "live") is finished
    assert run.info.status == ("FINISHED" if finished else "KILLED")
