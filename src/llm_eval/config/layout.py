"""Where the DVC pipeline keeps its files, and which models it runs (`run.models`).

`dvc.yaml` cannot build a dependency list from `run.models`, so `llm-eval report
--from-params` reads the model list from params.yaml and finds each model's scored file at
the fixed place the `score` stage writes it.
"""

from __future__ import annotations

from pathlib import Path

from llm_eval.config.loading import raw_params
from llm_eval.errors import UsageError

SCORED_DIR = Path("results/scored")


def pipeline_models(config_root: Path) -> list[str]:
    """`run.models` from params.yaml under `config_root`, in order, without duplicates."""
    run = raw_params(config_root).get("run") or {}
    models = run.get("models") or []
    if not isinstance(models, list) or not all(isinstance(name, str) for name in models):
        raise UsageError("--from-params: run.models in params.yaml must be a list of names")
    if not models:
        raise UsageError("--from-params: run.models in params.yaml is empty")
    return list(dict.fromkeys(models))


def scored_paths(config_root: Path) -> list[Path]:
    """The scored trace file of every pipeline model, relative to `config_root`."""
    return [config_root / SCORED_DIR / f"{name}.jsonl" for name in pipeline_models(config_root)]
