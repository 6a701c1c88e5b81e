"""How many error rows the default retry budget leaves when a provider fails 30% of requests.

Every request to the stub fails with 429, 500 or 503 with probability `--fault-rate`,
independently of earlier attempts (as on a real overloaded server), and the whole active suite
runs `--runs` times with the default runner settings from params.yaml (backoff delays are
skipped: they change how long a run takes, not how many attempts a call gets).

    uv run python perf/fault_budget.py                  # 20 runs at 30%
    uv run python perf/fault_budget.py --max-attempts 4 # what a smaller budget leaves
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ["LLM_EVAL_TRACKING"] = "0"
os.environ["STUB_API_KEY"] = "sk-fault-budget-0000000000"

TRANSIENT = ("429", "500", "503")


def suite_copy(directory: Path, base_url: str) -> Path:
    root = directory / "suite"
    root.mkdir()
    shutil.copy(REPO / "params.yaml", root / "params.yaml")
    shutil.copytree(REPO / "configs", root / "configs")
    shutil.copytree(REPO / "data", root / "data")
    with (root / "configs" / "models.yaml").open("a", encoding="utf-8") as handle:
        handle.write(
            f"\n  stub:\n    provider: litellm\n    model: openai/stub-model\n"
            f"    api_base: {base_url}\n    api_key_env: STUB_API_KEY\n"
        )
    return root


async def one_run(root: Path, output: Path, max_attempts: int | None) -> tuple[int, int, int]:
    from llm_eval.config.loading import load_config
    from llm_eval.runner.runner import EvaluationRunner
    from llm_eval.runner.trace_io import read_rows

    config = load_config(root)
    update: dict[str, object] = {"backoff_base_s": 0.0, "backoff_max_s": 0.0, "cache": False}
    if max_attempts is not None:
        update["max_attempts"] = max_attempts
    config.runner = config.runner.model_copy(update=update)
    runner = EvaluationRunner(config, ["stub"], config.active_benchmarks(), output, use_cache=False)
    summary = await runner.run()
    rows = read_rows(output)
    return len(rows), summary.statuses["error"], sum(row.attempts for row in rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--fault-rate", type=float, default=0.3)
    parser.add_argument("--max-attempts", type=int, default=None)
    args = parser.parse_args()
    from tests.support.openai_stub import StubConfig, start_stub  # noqa: I001

    from llm_eval.config.loading import load_config

    budget = args.max_attempts or load_config(REPO).runner.max_attempts
    print(f"fault rate {args.fault_rate:.0%} ({', '.join(TRANSIENT)}), max_attempts {budget}")
    clean_runs = 0
    with tempfile.TemporaryDirectory() as tmp, start_stub() as stub:
        root = suite_copy(Path(tmp), stub.base_url)
        for run in range(1, args.runs + 1):
            faults = StubConfig(fault_rate=args.fault_rate, fault_kinds=TRANSIENT,
                                independent_faults=True, retry_after="0", seed=run)  # fmt: skip
            stub.set_config(faults)
            stub.reset()
            output = Path(tmp) / f"run-{run}.jsonl"
            rows, errors, attempts = asyncio.run(one_run(root, output, args.max_attempts))
            clean_runs += errors == 0
            print(f"  run {run:2d}: {rows} rows, {errors} error rows, {attempts} attempts")
    print(f"runs with zero error rows: {clean_runs} of {args.runs}")
    return 0 if clean_runs == args.runs else 1


if __name__ == "__main__":
    raise SystemExit(main())
