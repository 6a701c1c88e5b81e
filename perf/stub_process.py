"""The local OpenAI-compatible stub in a process of its own, for the benchmarks in `perf/`.

The stub runs apart so that its CPU is never counted as the harness's (or a bare loop's).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

STUB_SERVER = """
import sys, time
sys.path.insert(0, {repo!r})
from tests.support.openai_stub import StubConfig, start_stub
stub = start_stub(StubConfig(latency_s=float(sys.argv[1])))
print(stub.base_url, flush=True)
while True:
    time.sleep(3600)
"""
"""The stub's process: it prints its base URL, then serves until it is killed."""


def start_stub_process(latency_s: float, prelude: str = "") -> tuple[subprocess.Popen[str], str]:
    """Start the stub (after `prelude`, e.g. raising its open-file limit); return the process
    and its base URL."""
    script = prelude + STUB_SERVER.format(repo=str(REPO))
    process = subprocess.Popen(
        [sys.executable, "-c", script, str(latency_s)], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    base_url = process.stdout.readline().strip()
    if not base_url:
        process.kill()
        raise RuntimeError("the stub server did not start")
    return process, base_url
