"""What one `python_exec` call costs over starting the interpreter plainly.

Each round times, in turn, `--calls` runs of a one-line program (`print(6 * 7)`) started as
a plain `python -I -c` subprocess (the floor), then through this checkout's `run_python`,
and, with `--compare DIR`, through the `run_python` of another checkout (its own `.venv`),
e.g. the main branch before a change. Every measurement runs in a fresh process of the
interpreter that owns the code, so imports are equal. The medians per call and their ratios
come from the same run, so the machine's load affects all of them alike.

    uv run python perf/python_exec_overhead.py --rounds 5 --calls 10
    uv run python perf/python_exec_overhead.py --rounds 5 --calls 10 --compare /work/main
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PROGRAM = "print(6 * 7)"
# Runs in a fresh interpreter: times `calls` sandboxed calls one after another.
MEASURE_SANDBOX = """
import asyncio, json, sys, time
from llm_eval.tools.python_exec import PythonExecLimits, run_python

async def main(calls):
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        result = await run_python(sys.argv[2], PythonExecLimits(timeout_s=60))
        times.append(time.perf_counter() - started)
        assert result.stdout == "42\\n", result
    print(json.dumps(times))

asyncio.run(main(int(sys.argv[1])))
"""
MEASURE_PLAIN = """
import json, subprocess, sys, time
times = []
for _ in range(int(sys.argv[1])):
    started = time.perf_counter()
    out = subprocess.run([sys.executable, "-I", "-c", sys.argv[2]], capture_output=True)
    times.append(time.perf_counter() - started)
    assert out.stdout == b"42\\n", out
print(json.dumps(times))
"""


def measure(python: Path, checkout: Path, snippet: str, calls: int) -> list[float]:
    """Per-call seconds of `calls` calls, measured by `snippet` run with `python`."""
    done = subprocess.run(
        [str(python), "-c", snippet, str(calls), PROGRAM],
        cwd=checkout, capture_output=True, text=True,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"measuring in {checkout} failed:\n{done.stderr}")
    return [float(t) for t in json.loads(done.stdout)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--compare", type=Path, default=None, help="another checkout")
    args = parser.parse_args()
    python = Path(sys.executable)
    kinds = {
        "plain interpreter": (python, REPO, MEASURE_PLAIN),
        "python_exec (this checkout)": (python, REPO, MEASURE_SANDBOX),
    }
    if args.compare is not None:
        other = args.compare.resolve()
        kinds[f"python_exec ({other})"] = (other / ".venv" / "bin" / "python", other,
                                           MEASURE_SANDBOX)  # fmt: skip
    times: dict[str, list[float]] = {name: [] for name in kinds}
    for index in range(args.rounds):
        for name, (interpreter, checkout, snippet) in kinds.items():
            times[name] += measure(interpreter, checkout, snippet, args.calls)
        print(f"  round {index + 1} of {args.rounds} done", file=sys.stderr)
    medians = {name: statistics.median(values) for name, values in times.items()}
    floor = medians["plain interpreter"]
    print(f"median per call over {args.rounds} x {args.calls} calls:")
    for name, median in medians.items():
        print(f"  {name:<40} {median * 1000:8.1f} ms   x{median / floor:5.2f} of plain")
    if args.compare is not None:
        new, old = list(medians.values())[1:]
        print(f"  this checkout / compared checkout: {new / old:.2f}")


if __name__ == "__main__":
    main()
