"""The direct route against the transport's floor: bare aiohttp, bare SDK and bare LiteLLM loops.

Each system sends the same single-turn requests to a local OpenAI-compatible stub (its own
process, its CPU not counted), as a whole process of its own, start-up included:

  * llm-eval direct    `llm-eval run` on the default route (`provider: openai_compatible`)
  * bare aiohttp loop  one `ClientSession`, a semaphore, `json.dumps` / `json.loads`
  * bare SDK loop      `AsyncOpenAI().chat.completions.create` (the SDK's defaults)
  * bare LiteLLM loop  `litellm.acompletion` under one semaphore

A load is (requests, stub latency, tasks in flight). Each load runs its systems in rotation
(the first system moves on each round) and keeps the median of the rounds: wall time and its
ratio to the ideal (requests x latency / in flight), CPU per request and its ratio to the bare
aiohttp loop's, peak memory (the kernel's `ru_maxrss`), and for llm-eval the rows written and
error rows. The load average before and after each load is printed with it.

    uv run python perf/transport_floor.py                  # both default loads, 3 rounds
    uv run python perf/transport_floor.py --load 64 --rounds 1 --systems "llm-eval direct" \
        --systems "bare aiohttp loop"                      # a quick look
    uv run python perf/transport_floor.py --check          # exit 1 when a goal is missed

The default loads: 2,000 requests at 0.1 s, 64 in flight (goal: direct CPU <= 3x the bare
aiohttp loop's) and 8,000 requests at 0.5 s, 1,024 in flight (goal: wall <= 2x the ideal, no
row lost, no error row). Compile bytecode first (`uv sync --compile-bytecode`): start-up is
part of what a run costs. Every process raises its soft limit on open files, as `llm-eval run`
does, so 1,024 sockets fit.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from harness_bytecode import compile_harness
from stub_process import start_stub_process

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.support.load_suite import write_load_suite  # noqa: E402

SYSTEMS = ("llm-eval direct", "bare aiohttp loop", "bare SDK loop", "bare LiteLLM loop")
BASELINE = "bare aiohttp loop"
LOADS = {64: (2000, 0.1), 1024: (8000, 0.5)}
"""In flight -> (requests, stub latency in s)."""

RAISE_NOFILE = """
import resource
_soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (_hard, _hard))
"""


BARE_LOOPS = (
    RAISE_NOFILE
    + """
import asyncio, json, os, sys
base_url, system = sys.argv[1], sys.argv[2]
requests, concurrency = int(sys.argv[3]), int(sys.argv[4])

def messages(i):
    return [{"role": "user", "content": f"Request {i}: what is 6 x 7?"}]

async def main():
    limit = asyncio.Semaphore(concurrency)
    if system == "bare LiteLLM loop":
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        import litellm
        async def call(i):
            reply = await litellm.acompletion(
                model="openai/stub", api_base=base_url, api_key="no-key-needed",
                messages=messages(i), max_tokens=4096, timeout=60, num_retries=0)
            return reply.choices[0].message.content
    elif system == "bare SDK loop":
        from openai import AsyncOpenAI
        client = AsyncOpenAI(base_url=base_url, api_key="no-key-needed", max_retries=0)
        async def call(i):
            reply = await client.chat.completions.create(
                model="stub", messages=messages(i), max_tokens=4096, timeout=60)
            return reply.choices[0].message.content
    else:
        import aiohttp
        session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))
        url = base_url + "/chat/completions"
        headers = {"Authorization": "Bearer no-key-needed", "Content-Type": "application/json"}
        async def call(i):
            body = {"model": "stub", "messages": messages(i), "max_tokens": 4096}
            async with session.post(url, data=json.dumps(body).encode(), headers=headers) as r:
                reply = json.loads(await r.read())
            return reply["choices"][0]["message"]["content"]
    async def one(i):
        async with limit:
            assert await call(i)
    await asyncio.gather(*(one(i) for i in range(requests)))
    if system == "bare aiohttp loop":
        await session.close()

asyncio.run(main())
"""
)

LLM_EVAL = (
    RAISE_NOFILE
    + """
import sys
from llm_eval.cli import main
sys.argv = ["llm-eval", *sys.argv[1:]]
main()
"""
)


@dataclass(frozen=True)
class Measurement:
    """One whole process: wall and CPU seconds (user + system), peak RSS, rows it wrote."""

    requests: int
    wall_s: float
    cpu_s: float
    peak_mib: float
    rows: int | None = None
    error_rows: int | None = None

    @property
    def cpu_ms_per_request(self) -> float:
        return 1000 * self.cpu_s / self.requests


def command(system: str, root: Path, base_url: str, requests: int, concurrency: int) -> list[str]:
    """The process that runs `system` once over the whole workload."""
    if system == "llm-eval direct":
        return [sys.executable, "-c", LLM_EVAL, "run", "--config-root", str(root),
                "--model", "direct", "--benchmark", "load", "--no-cache", "--overwrite",
                "--fail-on-error", "0", "--output", str(root / "direct.jsonl")]  # fmt: skip
    return [sys.executable, "-c", BARE_LOOPS, base_url, system, str(requests), str(concurrency)]


def run_once(system: str, args: list[str], requests: int, root: Path) -> Measurement:
    """Run one process to its end; its CPU and peak memory come from the kernel (`wait4`)."""
    env = {**os.environ, "LLM_EVAL_TRACKING": "0", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    # The child's error output goes to a file: a pipe nobody reads while waiting would stall
    # a child that writes more than the pipe holds.
    with tempfile.TemporaryFile("w+") as errors_out:
        started = time.perf_counter()
        process = subprocess.Popen(
            args, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=errors_out
        )
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        errors_out.seek(0)
        stderr = errors_out.read()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{system} failed: {stderr[-2000:]}")
    if stderr.strip() and system != "llm-eval direct":  # llm-eval's is its progress line
        print(f"  ({system} wrote to stderr: {stderr.strip()[-300:]!r})")
    rows = errors = None
    if system == "llm-eval direct":
        statuses = Counter(
            json.loads(line)["status"]
            for line in (root / "direct.jsonl").read_text().splitlines()
            if line.strip()
        )
        rows, errors = sum(statuses.values()), statuses["error"]
    cpu = usage.ru_utime + usage.ru_stime
    return Measurement(requests, wall, cpu, usage.ru_maxrss / 1024, rows, errors)


def measure(
    concurrency: int, requests: int, latency: float, rounds: int, systems: list[str]
) -> dict[str, Measurement]:
    """Median of each system over `rounds` rounds in rotation."""
    stub, base_url = start_stub_process(latency, RAISE_NOFILE)
    runs: dict[str, list[Measurement]] = {system: [] for system in systems}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            write_load_suite(root, base_url, requests, concurrency)
            for index in range(rounds):
                shift = index % len(systems)
                for system in systems[shift:] + systems[:shift]:
                    args = command(system, root, base_url, requests, concurrency)
                    last = run_once(system, args, requests, root)
                    runs[system].append(last)
                    rows = f"  rows {last.rows} errors {last.error_rows}" if last.rows else ""
                    print(f"  round {index + 1} {system:<18} wall {last.wall_s:6.2f} s  CPU "
                          f"{last.cpu_ms_per_request:5.2f} ms/request  peak "
                          f"{last.peak_mib:5.0f} MiB{rows}", flush=True)  # fmt: skip
    finally:
        stub.kill()
        stub.wait()
    return {system: _median(measured) for system, measured in runs.items()}


def _median(measured: list[Measurement]) -> Measurement:
    first = measured[0]
    return Measurement(
        first.requests,
        statistics.median(m.wall_s for m in measured),
        statistics.median(m.cpu_s for m in measured),
        max(m.peak_mib for m in measured),
        None if first.rows is None else min(m.rows or 0 for m in measured),
        None if first.error_rows is None else max(m.error_rows or 0 for m in measured),
    )


def print_table(results: dict[str, Measurement], ideal: float) -> None:
    base = results.get(BASELINE)
    print(f"| system | wall s | wall / ideal ({ideal:.2f} s) | CPU ms/request | "
          "CPU / bare aiohttp | peak MiB | rows (errors) |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for system, m in results.items():
        ratio = f"{m.cpu_s / base.cpu_s:.2f}" if base else "-"
        rows = f"{m.rows} ({m.error_rows})" if m.rows is not None else "-"
        print(f"| {system} | {m.wall_s:.2f} | {m.wall_s / ideal:.2f} | "
              f"{m.cpu_ms_per_request:.2f} | {ratio} | {m.peak_mib:.0f} | {rows} |")  # fmt: skip


def missed_goals(
    concurrency: int,
    requests: int,
    results: dict[str, Measurement],
    ideal: float,
    args: argparse.Namespace,
) -> list[str]:
    """The goals the direct route misses at this load."""
    direct = results.get("llm-eval direct")
    if direct is None:
        return []
    missed = []
    if direct.rows != requests or direct.error_rows:
        missed.append(f"{concurrency} in flight: {direct.rows} rows, {direct.error_rows} errors")
    base = results.get(BASELINE)
    if base is not None and direct.cpu_s / base.cpu_s > args.max_cpu_ratio:
        missed.append(f"{concurrency} in flight: CPU {direct.cpu_s / base.cpu_s:.2f}x bare aiohttp")
    if concurrency >= 1024 and direct.wall_s / ideal > args.max_wall_ratio:
        missed.append(f"{concurrency} in flight: wall {direct.wall_s / ideal:.2f}x the ideal")
    return missed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--load", type=int, action="append", choices=sorted(LOADS),
                        help="tasks in flight (repeatable; default: every load)")  # fmt: skip
    parser.add_argument("--requests", type=int, help="override the load's request count")
    parser.add_argument("--systems", action="append", choices=SYSTEMS,
                        help="systems to run (repeatable; default: all four)")  # fmt: skip
    parser.add_argument("--rounds", type=int, default=3, help="rounds in rotation; median kept")
    parser.add_argument("--check", action="store_true", help="exit 1 when a goal is missed")
    parser.add_argument("--max-cpu-ratio", type=float, default=3.0)
    parser.add_argument("--max-wall-ratio", type=float, default=2.0)
    args = parser.parse_args()
    compile_harness()
    systems = [s for s in SYSTEMS if s in (args.systems or SYSTEMS)]
    missed: list[str] = []
    for concurrency in args.load or sorted(LOADS):
        requests, latency = LOADS[concurrency]
        requests = args.requests or requests
        ideal = requests * latency / concurrency
        before = os.getloadavg()[0]
        print(f"\n{requests} requests, stub latency {latency} s, {concurrency} in flight, "
              f"median of {args.rounds} rounds in rotation (load {before:.1f})")  # fmt: skip
        results = measure(concurrency, requests, latency, args.rounds, systems)
        print(f"load average before {before:.1f}, after {os.getloadavg()[0]:.1f}")
        print_table(results, ideal)
        missed += missed_goals(concurrency, requests, results, ideal, args)
    if args.check and missed:
        print("\nMISSED: " + "; ".join(missed))
        sys.exit(1)
    if args.check:
        print("\nOK: every goal met")


if __name__ == "__main__":
    main()
