"""A config root for load runs: one benchmark of N single-turn tasks, one stub on both routes.

Used by the tests of many tasks in flight and by `perf/`: the models `direct`
(`openai_compatible`) and `litellm` point at the same OpenAI-compatible server.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def write_load_suite(
    root: Path,
    base_url: str,
    requests: int,
    concurrency: int,
    *,
    tracking: bool = False,
    **runner: Any,
) -> None:
    """Write the suite under `root`, tracking into `<root>/mlruns` when `tracking`; `runner`
    settings override the load defaults."""
    (root / "configs").mkdir(parents=True)
    (root / "data").mkdir()
    with (root / "data" / "load.jsonl").open("w") as handle:
        for i in range(requests):
            task = {"id": f"t{i}", "task_type": "single_turn", "answer": "42",
                    "question": f"Request {i}: what is 6 x 7?"}  # fmt: skip
            handle.write(json.dumps(task) + "\n")
    stub = {"model": "openai/stub", "api_base": base_url}
    params = {
        "run": {"models": ["direct"]},
        "tracking": {"enabled": tracking},
        "runner": {
            "global_limit": concurrency,
            "per_model_limit": concurrency,
            "max_attempts": 1,
            "cache": False,
            "request_timeout_s": 60,
            **runner,
        },
    }
    models = {
        "models": {
            "direct": {"provider": "openai_compatible", **stub},
            "litellm": {"provider": "litellm", **stub},
        }
    }
    (root / "params.yaml").write_text(json.dumps(params))
    bench = {"benchmarks": {"load": {"path": "data/load.jsonl", "task_type": "single_turn",
                                     "scorer": "numeric", "prompt": "default"}}}  # fmt: skip
    (root / "configs" / "benchmarks.yaml").write_text(json.dumps(bench))
    (root / "configs" / "prompts.yaml").write_text(json.dumps({"prompts": {"default": {}}}))
    (root / "configs" / "tools.yaml").write_text(json.dumps({"tools": {}}))
    (root / "configs" / "models.yaml").write_text(json.dumps(models))
