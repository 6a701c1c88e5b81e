"""`llm-eval validate --json`: the pipeline's validate stage writes its outcome and tracks it,
and with `--run-inputs` the digest of what a run sends (the `run` stage's dependency)."""

from __future__ import annotations

from pathlib import Path

from llm_eval.config.loading import AppConfig
from llm_eval.config.run_inputs import run_inputs
from llm_eval.config.validation import ValidationReport, validation_summary
from llm_eval.runner.trace_io import dump_json
from llm_eval.tracking import track_stage


def write_validation(report: ValidationReport, path: Path, config_root: Path) -> None:
    """Write the validation summary as JSON, then track the `validate` stage."""
    summary = validation_summary(report)
    dump_json(path, summary)
    metrics = {
        "ok": summary["ok"],
        "problems": len(summary["problems"]),
        "active_tasks": summary["active_tasks"],
        "tasks": {name: info["tasks"] for name, info in summary["benchmarks"].items()},
    }
    track_stage("validate", config_root=config_root, artifacts=[path], metrics=metrics)


def write_run_inputs(config: AppConfig, path: Path) -> None:
    """Write what a run sends, keys left out (see `llm_eval.config.run_inputs`)."""
    dump_json(path, run_inputs(config))
