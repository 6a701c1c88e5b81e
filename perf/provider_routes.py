"""The two routes to an OpenAI-compatible server side by side, against two bare client loops.

Four systems send the same single-turn requests to a local OpenAI-compatible stub (its own
process, its CPU not counted), each as a whole process of its own, start-up included:

  * llm-eval, direct route   `llm-eval run` on a model with `provider: openai_compatible`
  * llm-eval, LiteLLM route  `llm-eval run` on the same model with `provider: litellm`
  * bare LiteLLM loop        `litellm.acompletion` under one semaphore
  * bare SDK loop            `AsyncOpenAI().chat.completions.create` (the SDK's defaults)

Each latency runs the four in rotation (the first system moves on each round) and keeps the
median of the rounds; the table gives wall time and CPU per request, and their ratios to the
bare LiteLLM loop. `--check` exits 1 when the direct route misses its bounds.

    uv run python perf/provider_routes.py --check                 # 2,000 requests, 3 rounds
    uv run python perf/provider_routes.py --requests 500 --rounds 1  # a quick look

Start-up is part of what a run costs, so compile bytecode first (`uv sync --compile-bytecode`):
with `PYTHONDONTWRITEBYTECODE=1` every process recompiles what it imports, LiteLLM most of all.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from stub_process import start_stub_process

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.support.load_suite import write_load_suite  # noqa: E402

SYSTEMS = ("llm-eval direct", "llm-eval LiteLLM", "bare LiteLLM loop", "bare SDK loop")
BASELINE = "bare LiteLLM loop"


BARE_LOOPS = """
import asyncio, os, sys
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
            return await litellm.acompletion(
                model="openai/stub", api_base=base_url, api_key="no-key-needed",
                messages=messages(i), max_tokens=4096, timeout=60, num_retries=0)
    else:
        from openai import AsyncOpenAI
        client = AsyncOpenAI(base_url=base_url, api_key="no-key-needed", max_retries=0)
        async def call(i):
            return await client.chat.completions.create(
                model="stub", messages=messages(i), max_tokens=4096, timeout=60)
    async def one(i):
        async with limit:
            reply = await call(i)
            assert reply.choices[0].message.content
    await asyncio.gather(*(one(i) for i in range(requests)))

asyncio.run(main())
"""


@dataclass(frozen=True)
class Measurement:
    """Wall and CPU seconds (user + system) of one whole process."""

    requests: int
    wall_s: float
    cpu_s: float

    @property
    def cpu_ms_per_request(self) -> float:
        return 1000 * self.cpu_s / self.requests


def command(system: str, root: Path, base_url: str, requests: int, concurrency: int) -> list[str]:
    """The process that runs `system` once over the whole workload."""
    if system.startswith("llm-eval"):
        model = "direct" if system == "llm-eval direct" else "litellm"
        return [sys.executable, "-m", "llm_eval.cli", "run", "--config-root", str(root),
                "--model", model, "--benchmark", "load", "--no-cache", "--overwrite",
                "--fail-on-error", "0", "--output", str(root / f"{model}.jsonl")]  # fmt: skip
    return [sys.executable, "-c", BARE_LOOPS, base_url, system, str(requests), str(concurrency)]


def run_once(args: list[str], requests: int) -> Measurement:
    """Run one process to its end; its own CPU time comes from the kernel (`wait4`)."""
    env = {**os.environ, "LLM_EVAL_TRACKING": "0", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    started = time.perf_counter()
    process = subprocess.Popen(
        args, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        assert process.stderr is not None
        raise RuntimeError(f"{args[:4]} failed: {process.stderr.read()[-2000:]}")
    return Measurement(requests, wall, usage.ru_utime + usage.ru_stime)


def measure_latency(
    latency: float, requests: int, concurrency: int, rounds: int
) -> dict[str, Measurement]:
    """Median wall and CPU of each system over `rounds` rounds in rotation."""
    stub, base_url = start_stub_process(latency)
    runs: dict[str, list[Measurement]] = {system: [] for system in SYSTEMS}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            write_load_suite(root, base_url, requests, concurrency)
            for index in range(rounds):
                order = SYSTEMS[index % len(SYSTEMS) :] + SYSTEMS[: index % len(SYSTEMS)]
                for system in order:
                    args = command(system, root, base_url, requests, concurrency)
                    runs[system].append(run_once(args, requests))
                    last = runs[system][-1]
                    print(f"  round {index + 1} {system:<18} wall {last.wall_s:6.2f} s  "
                          f"CPU {last.cpu_ms_per_request:5.2f} ms/request", flush=True)  # fmt: skip
    finally:
        stub.kill()
        stub.wait()
    return {
        system: Measurement(
            requests,
            statistics.median(m.wall_s for m in measured),
            statistics.median(m.cpu_s for m in measured),
        )
        for system, measured in runs.items()
    }


def print_table(latency: float, results: dict[str, Measurement], ideal: float) -> None:
    base = results[BASELINE]
    print(f"\nL = {latency} s (ideal run phase {ideal:.2f} s)")
    print(f"| {'system':<18} | wall s | wall / bare LiteLLM | CPU ms/request | "
          "CPU / bare LiteLLM |")  # fmt: skip
    print(f"|{'-' * 20}|--------|---------------------|----------------|-------------------|")
    for system in SYSTEMS:
        m = results[system]
        print(f"| {system:<18} | {m.wall_s:6.2f} | {m.wall_s / base.wall_s:19.2f} | "
              f"{m.cpu_ms_per_request:14.2f} | "
              f"{m.cpu_ms_per_request / base.cpu_ms_per_request:17.2f} |")  # fmt: skip


def failures(
    latency: float, results: dict[str, Measurement], args: argparse.Namespace
) -> list[str]:
    """The bounds the direct route (and the LiteLLM route) miss at this latency."""
    direct, litellm = results["llm-eval direct"], results["llm-eval LiteLLM"]
    bare, sdk = results[BASELINE], results["bare SDK loop"]
    checks = [
        ("direct CPU / bare LiteLLM", direct.cpu_s / bare.cpu_s, args.max_cpu_ratio),
        ("direct CPU / bare SDK", direct.cpu_s / sdk.cpu_s, args.max_sdk_cpu_ratio),
        ("LiteLLM route CPU / bare LiteLLM", litellm.cpu_s / bare.cpu_s, args.max_litellm_ratio),
    ]
    if latency >= 0.5:
        checks.append(
            ("direct wall / bare LiteLLM", direct.wall_s / bare.wall_s, args.max_wall_ratio)
        )
    return [f"L={latency}: {name} {value:.2f} > {bound}" for name, value, bound in checks
            if value > bound]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency", type=float, action="append",
                        help="stub latency in s (repeatable; default 0.1 and 0.5)")  # fmt: skip
    parser.add_argument("--rounds", type=int, default=3, help="rounds in rotation; median kept")
    parser.add_argument("--check", action="store_true",
                        help="exit 1 when the direct route misses a bound")  # fmt: skip
    parser.add_argument("--max-cpu-ratio", type=float, default=0.5)
    parser.add_argument("--max-wall-ratio", type=float, default=0.75)
    parser.add_argument("--max-sdk-cpu-ratio", type=float, default=1.15)
    parser.add_argument("--max-litellm-ratio", type=float, default=1.20)
    args = parser.parse_args()
    latencies = args.latency or [0.1, 0.5]
    print(f"workload: {args.requests} single-turn requests, {args.concurrency} in flight, "
          f"median of {args.rounds} rounds in rotation, whole processes")  # fmt: skip
    missed: list[str] = []
    for latency in latencies:
        print(f"\nstub latency {latency} s")
        results = measure_latency(latency, args.requests, args.concurrency, args.rounds)
        print_table(latency, results, args.requests * latency / args.concurrency)
        missed += failures(latency, results, args)
    if args.check and missed:
        print("\nFAIL: " + "; ".join(missed))
        sys.exit(1)
    if args.check:
        print("\nOK: every bound met")


if __name__ == "__main__":
    main()
