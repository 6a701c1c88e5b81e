"""A run keeps 1,000+ tasks in flight on the direct route: sockets, pool and ramp-up scale.

Real parts: a stub server on 127.0.0.1 that holds every request for a while, the runner with
`global_limit` and `per_model_limit` of 1,100, and a soft limit on open files of 1,024 (Linux's
default), which one socket per task on each side of the connection would exceed. The stub
counts how many requests it held at once; nothing here measures time.
"""

from __future__ import annotations

import asyncio
import resource
from collections import Counter
from pathlib import Path

import pytest

from llm_eval.config.loading import load_config
from llm_eval.runner.runner import EvaluationRunner
from llm_eval.runner.trace_io import read_rows
from tests.support.load_suite import write_load_suite
from tests.support.openai_stub import start_stub

pytestmark = pytest.mark.slow  # 1,100 real requests

TASKS = 1100


def test_eleven_hundred_tasks_are_in_flight_at_once_and_every_row_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 4 * TASKS:
        pytest.skip(f"the hard limit on open files here is {hard}")
    monkeypatch.setenv("LLM_EVAL_TRACKING", "0")
    # Each request is held 8 s: far longer than sending 1,100 takes, even on a busy machine,
    # so the whole wave is in flight together unless something in the harness caps it.
    with start_stub(latency_s=8.0) as stub:
        write_load_suite(tmp_path, stub.base_url, TASKS, TASKS)
        config = load_config(tmp_path)
        resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))
        try:
            runner = EvaluationRunner(config, ["direct"], ["load"], tmp_path / "t.jsonl")
            asyncio.run(runner.run())
        finally:
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        peak = stub.peak_in_flight
    rows = read_rows(tmp_path / "t.jsonl")
    assert len(rows) == TASKS and len({row.task_id for row in rows}) == TASKS
    assert Counter(row.status for row in rows) == {"correct": TASKS}
    assert peak >= 1000, f"{peak} requests in flight at the peak"
