"""What MLflow tracking adds to a 2,000-row run, and to the `score` stage that follows it.

A copy of the suite runs `mock-varied` over every active benchmark for 13 epochs (2,028
rows) with tracking off, then on (a fresh SQLite store each time, created by a `validate`
first, so the one-off schema set-up is not counted), `--repeat` times each,
keeping the fastest of each (noise on a shared machine only adds time). With tracking on,
`run` logs its MLflow run and one trace per row; `score` then logs one assessment per row.

    uv run python perf/tracking_overhead.py --repeat 3
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
EPOCHS = 13


def suite_copy(directory: Path) -> Path:
    root = directory / "suite"
    root.mkdir()
    shutil.copy(REPO / "params.yaml", root / "params.yaml")
    shutil.copytree(REPO / "configs", root / "configs")
    shutil.copytree(REPO / "data", root / "data")
    return root


def timed(root: Path, tracking: bool, *args: str) -> float:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MLFLOW_", "DVC_"))}
    env["LLM_EVAL_TRACKING"] = "1" if tracking else "0"
    command = [str(Path(sys.executable).parent / "llm-eval"), *args]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{done.stdout}{done.stderr}")
    return elapsed


def one_round(directory: Path, tracking: bool) -> tuple[float, float]:
    root = suite_copy(directory)
    # An existing store, as in daily use: creating the SQLite schema takes a few seconds once.
    timed(root, tracking, "validate")
    run = timed(root, tracking, "run", "--model", "mock-varied", "--epochs", str(EPOCHS),
                "--no-cache", "--output", "t.jsonl")  # fmt: skip
    score = timed(root, tracking, "score", "--results", "t.jsonl", "--output", "s.jsonl")
    rows = sum(1 for _ in (root / "t.jsonl").open())
    assert rows == 2028, rows
    shutil.rmtree(root)
    return run, score


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    best: dict[bool, tuple[float, float]] = {}
    with tempfile.TemporaryDirectory() as directory:
        for index in range(args.repeat):
            for tracking in (False, True):
                run, score = one_round(Path(directory), tracking)
                label = "on " if tracking else "off"
                print(
                    f"  round {index + 1}, tracking {label}: run {run:6.2f} s, score {score:5.2f} s"
                )
                previous = best.get(tracking, (float("inf"), float("inf")))
                best[tracking] = (min(previous[0], run), min(previous[1], score))
    off, on = best[False], best[True]
    print(f"2028 rows, best of {args.repeat}:")
    print(f"  run   tracking off {off[0]:6.2f} s, on {on[0]:6.2f} s, ratio {on[0] / off[0]:.2f}")
    print(f"  score tracking off {off[1]:6.2f} s, on {on[1]:6.2f} s, ratio {on[1] / off[1]:.2f}")


if __name__ == "__main__":
    main()
