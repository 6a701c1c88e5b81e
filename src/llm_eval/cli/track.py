"""`llm-eval track`: check, and repair, the MLflow record of trace files."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from llm_eval.errors import UsageError

if TYPE_CHECKING:
    from mlflow import MlflowClient

    from llm_eval.schemas import TraceRow
    from llm_eval.scoring.reviews import Review, ReviewKey


def execute_track(results: list[Path], scored: bool, check_only: bool, config_root: Path) -> int:
    """Print one audit line per file; exit 1 if any record has a fault left.

    Without `check_only` the missing traces (and, `scored`, verdicts) are written first.
    """
    from llm_eval.runner.trace_io import read_rows
    from llm_eval.scoring.reviews import REVIEWS_FILE, read_reviews
    from llm_eval.tracking import prepare_tracking, wait_for_mlflow
    from llm_eval.tracking.context import build_context, read_params
    from llm_eval.tracking.stages import quiet_mlflow
    from llm_eval.tracking.store import client_for, experiment_id, lock_directory, store_lock

    for path in results:
        if not path.is_file():
            raise UsageError(f"RESULTS: no such file {path}")
    if not prepare_tracking(config_root, needs_mlflow=True):
        raise UsageError("tracking is off (LLM_EVAL_TRACKING=0 or tracking.enabled: false)")
    wait_for_mlflow()
    quiet_mlflow()
    ctx = build_context("track", config_root, read_params(config_root) or {})
    reviews = read_reviews(config_root / REVIEWS_FILE) if scored else None
    faults = 0
    with store_lock(lock_directory(ctx)):
        client = client_for(ctx)
        exp_id = experiment_id(client, ctx)
        for path in results:
            rows = read_rows(path)
            faults += track_file(client, exp_id, str(path), rows, scored, check_only, reviews)
    return 1 if faults else 0


def track_file(
    client: MlflowClient,
    experiment_id: str,
    source: str,
    rows: list[TraceRow],
    scored: bool,
    check_only: bool,
    reviews: Mapping[ReviewKey, Review] | None = None,
) -> int:
    """Repair (unless `check_only`) and audit one file's record; returns its fault count.

    `reviews`: the decisions of reviews/verdicts.jsonl, which people's verdicts must match.
    """
    from llm_eval.tracking import record
    from llm_eval.tracking.audit import audit_rows

    rows = record.unique_rows(rows)
    if not check_only:
        view = record.store_view(client, experiment_id, rows, verdicts=scored)
        traces = record.reconcile_traces(client, experiment_id, None, rows, view)
        verdicts = record.reconcile_verdicts(client, rows, view) if scored else None
        record.say_repairs(source, traces, verdicts)
    audit = audit_rows(client, experiment_id, source, rows, scored=scored, reviews=reviews)
    print(audit.line())
    return audit.faults
