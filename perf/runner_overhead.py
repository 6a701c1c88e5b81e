"""Measure the runner's overhead against a local OpenAI-compatible stub with fixed latency.

Prints, for the harness (EvaluationRunner -> LiteLLM -> HTTP -> stub):
  * ideal wall time (requests x latency / concurrency), measured wall time and their ratio;
  * CPU time per request of the harness and of bare `litellm.acompletion` calls on the same
    workload, and their ratio;
  * the zero-latency ceiling in requests per second.

The stub runs in a separate process so its CPU time is not counted as ours.

    uv run python perf/runner_overhead.py                 # the full workload (about 2 min)
    uv run python perf/runner_overhead.py --requests 200  # a quick look
    uv run python perf/runner_overhead.py --repeat 3      # best of three runs of each workload
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from harness_bytecode import compile_harness
from stub_process import start_stub_process

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.support.load_suite import write_load_suite  # noqa: E402

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ["LLM_EVAL_TRACKING"] = "0"


@dataclass
class Measurement:
    """Wall and CPU seconds of one workload."""

    requests: int
    wall_s: float
    cpu_s: float

    @property
    def cpu_ms_per_request(self) -> float:
        return 1000 * self.cpu_s / self.requests


def run_harness(root: Path, output: Path) -> Measurement:
    """Run the whole benchmark through EvaluationRunner."""
    from llm_eval.config.loading import load_config
    from llm_eval.runner.runner import EvaluationRunner

    config = load_config(root)
    runner = EvaluationRunner(config, ["litellm"], ["load"], output)
    wall, cpu = time.perf_counter(), time.process_time()
    summary = asyncio.run(runner.run())
    measurement = Measurement(
        summary.rows_written, time.perf_counter() - wall, time.process_time() - cpu
    )
    if summary.statuses["error"]:
        raise RuntimeError(f"{summary.statuses['error']} error rows: the measurement is invalid")
    return measurement


def run_bare(base_url: str, requests: int, concurrency: int) -> Measurement:
    """The same requests as bare `litellm.acompletion` calls under one semaphore."""
    from llm_eval.providers.litellm_client import load_litellm

    litellm = load_litellm()

    async def main() -> None:
        limit = asyncio.Semaphore(concurrency)

        async def one(i: int) -> None:
            async with limit:
                await litellm.acompletion(
                    model="openai/stub", api_base=base_url, api_key="no-key-needed",
                    messages=[{"role": "user", "content": f"Request {i}: what is 6 x 7?"}],
                    max_tokens=4096, timeout=60, num_retries=0,
                )  # fmt: skip

        await asyncio.gather(*(one(i) for i in range(requests)))

    wall, cpu = time.perf_counter(), time.process_time()
    asyncio.run(main())
    return Measurement(requests, time.perf_counter() - wall, time.process_time() - cpu)


def measure(
    latency: float, requests: int, concurrency: int, bare: bool, *, bare_first: bool = False
) -> tuple[Measurement, Measurement | None]:
    stub, base_url = start_stub_process(latency)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            write_load_suite(root, base_url, requests, concurrency)
            # Warm up imports and connections so neither side pays them inside the timing.
            run_bare(base_url, min(concurrency, 16), concurrency)
            baseline = run_bare(base_url, requests, concurrency) if bare and bare_first else None
            harness = run_harness(root, root / "trace.jsonl")
            if bare and baseline is None:
                baseline = run_bare(base_url, requests, concurrency)
            return harness, baseline
    finally:
        stub.kill()
        stub.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--cpu-latency", type=float, default=0.5)
    parser.add_argument("--check", action="store_true",
                        help="exit 1 when a ratio is above its bound")  # fmt: skip
    parser.add_argument("--max-wall-ratio", type=float, default=1.10)
    parser.add_argument("--max-cpu-ratio", type=float, default=1.20)
    parser.add_argument("--repeat", type=int, default=1,
                        help="run each workload N times and keep the fastest")  # fmt: skip
    parser.add_argument("--skip-ceiling", action="store_true")
    args = parser.parse_args()
    compile_harness()

    ideal = args.requests * args.latency / args.concurrency
    print(f"workload: {args.requests} requests, concurrency {args.concurrency}, "
          f"latency {args.latency} s")  # fmt: skip
    print(f"ideal wall time    {ideal:8.2f} s")
    # Noise on a shared machine only ever adds time, so the best of several runs is the
    # estimate of the harness's own cost (the convention of `timeit`).
    attempts = []
    for repeat in range(args.repeat):
        attempt, _ = measure(args.latency, args.requests, args.concurrency, bare=False)
        attempts.append(attempt)
        if args.repeat > 1:
            print(f"  run {repeat + 1}: {attempt.wall_s:.2f} s")
    harness = min(attempts, key=lambda m: m.wall_s)
    label = "measured wall time" if args.repeat == 1 else f"best of {args.repeat} runs"
    print(f"{label:<18} {harness.wall_s:8.2f} s")
    print(f"measured / ideal   {harness.wall_s / ideal:8.3f}")

    # Whichever side runs second in a process finds warmer caches, so repeats alternate the
    # order, and each side keeps its lowest CPU time.
    harness_runs, bare_runs = [], []
    for repeat in range(args.repeat):
        harness_cpu, bare_cpu = measure(
            args.cpu_latency, args.requests, args.concurrency, bare=True, bare_first=repeat % 2 == 1
        )
        assert bare_cpu is not None
        harness_runs.append(harness_cpu)
        bare_runs.append(bare_cpu)
        if args.repeat > 1:
            print(f"  run {repeat + 1}: harness {harness_cpu.cpu_ms_per_request:.2f} ms, "
                  f"bare {bare_cpu.cpu_ms_per_request:.2f} ms")  # fmt: skip
    cpu_harness = min(harness_runs, key=lambda m: m.cpu_ms_per_request)
    cpu_bare = min(bare_runs, key=lambda m: m.cpu_ms_per_request)
    print(f"CPU per request at {args.cpu_latency} s latency: harness "
          f"{cpu_harness.cpu_ms_per_request:.2f} ms, bare litellm.acompletion "
          f"{cpu_bare.cpu_ms_per_request:.2f} ms, ratio "
          f"{cpu_harness.cpu_ms_per_request / cpu_bare.cpu_ms_per_request:.3f}")  # fmt: skip

    if not args.skip_ceiling:
        ceiling, _ = measure(0.0, args.requests, args.concurrency, bare=False)
        print(f"zero-latency ceiling: {ceiling.requests / ceiling.wall_s:.0f} requests/s "
              f"({ceiling.cpu_ms_per_request:.2f} ms CPU per request)")  # fmt: skip
    wall_ratio = harness.wall_s / ideal
    cpu_ratio = cpu_harness.cpu_ms_per_request / cpu_bare.cpu_ms_per_request
    if args.check and (wall_ratio > args.max_wall_ratio or cpu_ratio > args.max_cpu_ratio):
        print(f"FAIL: wall ratio {wall_ratio:.3f} (bound {args.max_wall_ratio}), "
              f"CPU ratio {cpu_ratio:.3f} (bound {args.max_cpu_ratio})")  # fmt: skip
        sys.exit(1)


if __name__ == "__main__":
    main()
