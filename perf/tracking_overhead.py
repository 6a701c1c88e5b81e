"""What MLflow tracking adds to a 2,000-row run, and to the `score` stage that follows it.

A copy of the suite runs `mock-varied` over every active benchmark for as many epochs as make
about 2,000 rows (4 epochs of 521 tasks: 2,084 rows) with tracking off, then on (a fresh
SQLite store each time, created by a `validate` first, so the one-off schema set-up is not
counted), `--repeat` times each,
keeping the fastest of each (noise on a shared machine only adds time). With tracking on,
`run` logs its MLflow run and one trace per row; `score` then logs one assessment per row.

    uv run python perf/tracking_overhead.py --repeat 3
    uv run python perf/tracking_overhead.py --repeat 1 --stub-latency 0.1   # the bar: <= 1.2

`--stub-latency S` runs a model behind the local OpenAI-compatible stub (its own process,
answering after S seconds) through LiteLLM instead of the mock: a run that waits on the
network, as real models do, rather than one that keeps the CPU busy.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TARGET_ROWS = 2000


def suite_copy(directory: Path, stub_url: str | None) -> Path:
    root = directory / "suite"
    root.mkdir()
    shutil.copy(REPO / "params.yaml", root / "params.yaml")
    shutil.copytree(REPO / "configs", root / "configs")
    shutil.copytree(REPO / "data", root / "data")
    if stub_url is not None:
        with (root / "configs" / "models.yaml").open("a", encoding="utf-8") as handle:
            handle.write(
                f"\n  stub:\n    provider: litellm\n    model: openai/stub-model\n"
                f"    api_base: {stub_url}\n    api_key_env: STUB_API_KEY\n"
            )
    return root


def timed(root: Path, tracking: bool, *args: str) -> float:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MLFLOW_", "DVC_"))}
    env["LLM_EVAL_TRACKING"] = "1" if tracking else "0"
    env["STUB_API_KEY"] = "sk-tracking-overhead-000000000"
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    command = [str(Path(sys.executable).parent / "llm-eval"), *args]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{done.stdout}{done.stderr}")
    return elapsed


def one_round(directory: Path, tracking: bool, stub_url: str | None) -> tuple[float, float, int]:
    """Seconds of `run` and of `score`, and the rows the run wrote."""
    root = suite_copy(directory, stub_url)
    model = "stub" if stub_url else "mock-varied"
    # An existing store, as in daily use: creating the SQLite schema takes a few seconds once
    # (the `validate` stage, tracked when it writes its JSON, creates it).
    timed(root, tracking, "validate", "--json", "validation.json")
    run = timed(root, tracking, "run", "--model", model, "--epochs", str(epochs(root)),
                "--no-cache", "--output", "t.jsonl")  # fmt: skip
    score = timed(root, tracking, "score", "--results", "t.jsonl", "--output", "s.jsonl")
    rows = sum(1 for _ in (root / "t.jsonl").open())
    shutil.rmtree(root)
    return run, score, rows


def epochs(root: Path) -> int:
    """Epochs that make about TARGET_ROWS rows of the suite's active tasks."""
    sys.path.insert(0, str(REPO / "src"))
    from llm_eval.config.validation import validate

    report = validate(str(root))
    assert report.config is not None
    tasks = sum(report.task_counts[name] for name in report.config.active_benchmarks())
    return max(1, round(TARGET_ROWS / tasks))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--stub-latency", type=float, default=None)
    args = parser.parse_args()
    best: dict[bool, tuple[float, float]] = {}
    with tempfile.TemporaryDirectory() as directory, contextlib.ExitStack() as stack:
        stub_url = None
        if args.stub_latency is not None:
            sys.path.insert(0, str(REPO))
            from tests.support.openai_stub import start_stub

            stub_url = stack.enter_context(start_stub(latency_s=args.stub_latency)).base_url
        for index in range(args.repeat):
            for tracking in (False, True):
                run, score, rows = one_round(Path(directory), tracking, stub_url)
                label = "on " if tracking else "off"
                print(
                    f"  round {index + 1}, tracking {label}: run {run:6.2f} s, score {score:5.2f} s"
                )
                previous = best.get(tracking, (float("inf"), float("inf")))
                best[tracking] = (min(previous[0], run), min(previous[1], score))
    off, on = best[False], best[True]
    print(f"{rows} rows, best of {args.repeat}:")
    print(f"  run   tracking off {off[0]:6.2f} s, on {on[0]:6.2f} s, ratio {on[0] / off[0]:.2f}")
    print(f"  score tracking off {off[1]:6.2f} s, on {on[1]:6.2f} s, ratio {on[1] / off[1]:.2f}")


if __name__ == "__main__":
    main()
