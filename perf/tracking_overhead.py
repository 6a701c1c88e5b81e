"""What MLflow tracking adds to a run on the default (direct) route, and to the `score` stage.

A suite of `--requests` single-turn tasks (2,000 by default) runs against a local
OpenAI-compatible stub (its own process, its CPU not counted; `--latency` 0.1 s) through the
direct route (`provider: openai_compatible`) at `--concurrency` 64 in flight, with tracking
off and on in alternation (the first of the pair swaps each round). CPU is the whole
process's user + system time from the kernel (`wait4`), children it waited for included, so
work moved to a helper process is still counted. The store exists before timing starts (a
tracked `validate` creates it once), as in daily use.

The `score` stage is timed the same way on the run's rows, and on a 10-row file: the small
file's on-minus-off is the stage's fixed tracking cost (importing MLflow, opening the store,
the runs), the large one adds the per-row work (one verdict per row).

    uv run python perf/tracking_overhead.py                  # 3 rounds, medians
    uv run python perf/tracking_overhead.py --rounds 1       # one look

After the rounds, `perf/record_breakdown.py` splits the record of one run's rows into reading
them back, building the store's rows and SQLite's own work, in a process of its own.

The bars (issue: tracking nearly free): run CPU on/off <= 1.2, fixed score cost <= 2 s;
`--check` exits 1 when a bar is missed.
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
from dataclasses import dataclass
from pathlib import Path

from harness_bytecode import compile_harness
from stub_process import start_stub_process

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.support.load_suite import write_load_suite  # noqa: E402


@dataclass(frozen=True)
class Measurement:
    """Wall and CPU seconds (user + system, waited-for children included) of one process."""

    wall_s: float
    cpu_s: float


def llm_eval(root: Path, tracking: bool, *args: str) -> Measurement:
    """`llm-eval ARGS` in `root` to its end; CPU from the kernel (`wait4`)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MLFLOW_", "DVC_"))}
    env.update({"LLM_EVAL_TRACKING": "1" if tracking else "0",
                "LITELLM_LOCAL_MODEL_COST_MAP": "True"})  # fmt: skip
    with tempfile.TemporaryFile("w+") as stderr:
        started = time.perf_counter()
        process = subprocess.Popen(
            [sys.executable, "-m", "llm_eval.cli", *args],
            cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=stderr,
        )  # fmt: skip
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        stderr.seek(0)
        errors = stderr.read()
    if os.waitstatus_to_exitcode(status) != 0 or "warning" in errors.lower():
        raise SystemExit(f"llm-eval {' '.join(args)} (tracking {tracking}) failed:\n{errors}")
    return Measurement(wall, usage.ru_utime + usage.ru_stime)


def one_round(root: Path, index: int, tracking: bool) -> dict[str, Measurement]:
    """The run, the score of its rows, and the score of a 10-row file."""
    name = f"{'on' if tracking else 'off'}{index}"
    measured = {
        "run": llm_eval(
            root,
            tracking,
            "run",
            "--model",
            "direct",
            "--benchmark",
            "load",
            "--no-cache",
            "--fail-on-error",
            "0",
            "--output",
            f"{name}.jsonl",
        ),  # fmt: skip
    }
    small = root / f"{name}-small.jsonl"
    small.write_text("".join((root / f"{name}.jsonl").open().readlines()[:10]))
    measured["score"] = llm_eval(root, tracking, "score", "--results", f"{name}.jsonl")
    measured["score 10 rows"] = llm_eval(root, tracking, "score", "--results", small.name)
    return measured


def record_parts(root: Path, results: str) -> dict[str, float]:
    """`perf/record_breakdown.py` in a process of its own, on a run's rows and the store."""
    script = Path(__file__).resolve().parent / "record_breakdown.py"
    done = subprocess.run(
        [sys.executable, str(script), "--store", str(root / "mlruns"), "--rows",
         str(root / results)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    parts: dict[str, float] = json.loads(done.stdout)
    return parts


def median(runs: list[dict[str, Measurement]], what: str) -> Measurement:
    return Measurement(
        statistics.median(r[what].wall_s for r in runs),
        statistics.median(r[what].cpu_s for r in runs),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--check", action="store_true", help="exit 1 when a bar is missed")
    args = parser.parse_args()
    compile_harness()
    stub, base_url = start_stub_process(args.latency)
    runs: dict[bool, list[dict[str, Measurement]]] = {False: [], True: []}
    try:
        with tempfile.TemporaryDirectory() as directory:
            root = Path(directory)
            write_load_suite(root, base_url, args.requests, args.concurrency, tracking=True)
            llm_eval(root, True, "validate", "--json", "validation.json")  # creates the store
            for index in range(args.rounds):
                order = (False, True) if index % 2 == 0 else (True, False)
                for tracking in order:
                    runs[tracking].append(one_round(root, index, tracking))
                    line = ", ".join(f"{what} {m.wall_s:5.2f} s wall {m.cpu_s:5.2f} s CPU"
                                     for what, m in runs[tracking][-1].items())  # fmt: skip
                    print(f"  round {index + 1} tracking {'on ' if tracking else 'off'}: {line}",
                          flush=True)  # fmt: skip
            parts = record_parts(root, f"off{args.rounds - 1}.jsonl")
    finally:
        stub.kill()
        stub.wait()
    load = os.getloadavg()[0]
    print(f"\n{args.requests} requests, direct route, {args.concurrency} in flight, stub "
          f"{args.latency} s; median of {args.rounds} round(s); load {load:.1f}")  # fmt: skip
    print("| stage | CPU off s | CPU on s | CPU on/off | wall off s | wall on s |")
    print("|-------|-----------|----------|------------|------------|-----------|")
    for what in ("run", "score", "score 10 rows"):
        off, on = median(runs[False], what), median(runs[True], what)
        print(f"| {what} | {off.cpu_s:.2f} | {on.cpu_s:.2f} | {on.cpu_s / off.cpu_s:.2f} | "
              f"{off.wall_s:.2f} | {on.wall_s:.2f} |")  # fmt: skip
    off_cpu = median(runs[False], "run").cpu_s
    print(f"the record's parts, {parts['rows']} rows (perf/record_breakdown.py): read "
          f"{parts['read_s']:.2f} s, build {parts['build_s']:.2f} s, SQLite {parts['sql_s']:.2f} "
          f"s; SQLite alone is {parts['sql_s'] / off_cpu:.0%} of the run's CPU with tracking "
          f"off, the bar leaves 20% for the whole record")  # fmt: skip
    run_ratio = median(runs[True], "run").cpu_s / off_cpu
    fixed = median(runs[True], "score 10 rows").cpu_s - median(runs[False], "score 10 rows").cpu_s
    fixed_wall = (
        median(runs[True], "score 10 rows").wall_s - median(runs[False], "score 10 rows").wall_s
    )
    print(f"run CPU on/off {run_ratio:.2f} (bar 1.2); score's fixed tracking cost "
          f"{fixed:.2f} s CPU, {fixed_wall:.2f} s wall (bar 2 s)")  # fmt: skip
    if args.check and (run_ratio > 1.2 or fixed > 2.0):
        sys.exit(1)


if __name__ == "__main__":
    main()
