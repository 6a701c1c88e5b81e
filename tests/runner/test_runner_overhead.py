"""The runner overhead bounds, measured by the repository's performance script.

The workload the bounds are stated for: 2,000 requests, concurrency 64, 1 s latency for wall
time and 0.5 s for CPU time, each the best of three runs (about 4 min). The script fails when a
ratio passes its bound.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.slow  # about four minutes of timed runs


def test_runner_overhead_stays_within_its_bounds() -> None:
    env = {**os.environ, "LLM_EVAL_TRACKING": "0"}
    result = subprocess.run(
        [
            sys.executable,
            "perf/runner_overhead.py",
            "--requests",
            "2000",
            "--latency",
            "1.0",
            "--cpu-latency",
            "0.5",
            "--repeat",
            "3",
            "--skip-ceiling",
            "--check",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    print(result.stdout)
    assert result.returncode == 0, result.stdout + result.stderr[-2000:]
    assert "measured / ideal" in result.stdout and "ratio" in result.stdout
