"""Tracking stays off the request path: nothing of MLflow loads in `llm-eval run` while its
requests are in flight; the record is written after the last one, from the rows, and its
MLflow run spans the stage's work, not the logging.

MLflow's import maps its compiled dependencies (pandas, numpy, pyarrow, scipy) into the
process; the run itself needs none of them. The test reads the running process's
`/proc/<pid>/maps` while the local OpenAI-compatible stub is still answering its requests.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from llm_eval.runner.trace_io import read_rows
from llm_eval.tracking.traces import to_ns
from tests.support.openai_stub import StubConfig, start_stub
from tests.tracking.test_record import read_record, start_run, stub_suite

pytestmark = pytest.mark.slow

MLFLOW_ONLY = ("/pandas/", "/pyarrow/", "/scipy/", "/numpy/")
"""Compiled packages `import mlflow` maps and a run of the direct or LiteLLM route does not."""


def mapped_mlflow_parts(pid: int) -> set[str]:
    try:
        lines = Path(f"/proc/{pid}/maps").read_text().splitlines()
    except OSError:  # the process ended
        return set()
    return {part for line in lines for part in MLFLOW_ONLY if part in line}


def test_no_mlflow_in_the_run_process_while_requests_are_in_flight(tmp_path: Path) -> None:
    with start_stub(StubConfig(latency_s=0.3)) as stub:
        root = stub_suite(tmp_path / "suite", stub)
        proc = start_run(root)  # 48 requests, one at a time: about 15 s in flight
        trace = root / "t.jsonl"
        seen: set[str] = set()
        polls = 0
        while proc.poll() is None:
            rows = trace.read_text(encoding="utf-8").count("\n") if trace.is_file() else 0
            if stub.total_requests >= 48 or rows >= 47:
                break  # the last requests: from here on the record may be written
            seen |= mapped_mlflow_parts(proc.pid)
            polls += 1
            time.sleep(0.1)
        _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    assert polls > 20
    assert seen == set(), f"mapped while requests were in flight: {sorted(seen)}"
    rows = read_rows(root / "t.jsonl")
    assert len(rows) == 48
    record = read_record(root)
    record.assert_whole(rows, scored=False)  # the record, written after the run
    # The MLflow run spans the stage's work (its rows), not the logging after it.
    (run,) = [r for r in record.runs if r.data.tags.get("llm_eval.stage") == "run"]
    first = min(to_ns(row.started_at) or 0 for row in rows) // 1_000_000
    last = max(to_ns(row.finished_at) or 0 for row in rows) // 1_000_000
    assert run.info.start_time <= first and run.info.end_time >= last
    (parent,) = [r for r in record.runs if r.data.tags.get("llm_eval.stage") == "pipeline"]
    assert parent.info.start_time == run.info.start_time
    assert parent.info.end_time == run.info.end_time
