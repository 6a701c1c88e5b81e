"""`llm-eval score`: rescore trace rows (no model call), write metrics, explain one verdict."""

from __future__ import annotations

from pathlib import Path

from llm_eval.cli.judge import JudgeStep
from llm_eval.errors import UsageError
from llm_eval.reporting.metrics import benchmark_metrics, headline_metrics
from llm_eval.runner.run_record import copy_record
from llm_eval.runner.trace_io import dump_json, read_rows, write_rows
from llm_eval.scoring.reviews import REVIEWS_FILE, apply_reviews, read_reviews
from llm_eval.scoring.rows import score_rows


def execute_score(
    results: list[Path],
    output: Path | None,
    metrics: Path | None,
    config_root: Path = Path("."),
    details: Path | None = None,
    judge: str | None = None,
) -> int:
    """Rescore each file (in place unless `output`), print what changed.

    `metrics` gets the flat headline (DVC metrics); `details` the per-benchmark numbers.
    People's verdicts (reviews/verdicts.jsonl) apply after the rules; `judge` then settles
    what is still unsure.
    """
    from llm_eval.tracking import prepare_tracking, track_stage

    if output is not None and len(results) != 1:
        raise UsageError("--output takes exactly one --results file")
    for path in results:
        if not path.is_file():
            raise UsageError(f"--results: no such file {path}")
    reviews = read_reviews(config_root / REVIEWS_FILE)
    judging = JudgeStep.open(judge, config_root) if judge else None
    tracked = prepare_tracking(config_root)
    all_rows = []
    for path in results:
        rows = read_rows(path)
        rescored = apply_reviews(score_rows(rows), reviews)
        if judging is not None:
            rescored = judging.settle(path, rescored)
        changed = sum(a.status != b.status for a, b in zip(rows, rescored, strict=True))
        write_rows(output or path, rescored)
        if output is not None:  # the run's plan and stop reason travel with its rows
            copy_record(path, output)
        all_rows += rescored
        print(f"{path}: {len(rescored)} rows scored, {changed} verdict(s) changed")
        people = sum(1 for row in rescored if row.score and row.score.source == "human")
        if people:
            print(f"{path}: {people} verdict(s) decided by people ({REVIEWS_FILE})")
    per_benchmark = benchmark_metrics(all_rows)
    if metrics is not None:
        dump_json(metrics, headline_metrics(all_rows, per_benchmark.get("overall")))
    if details is not None:
        dump_json(details, per_benchmark)
    extra = [path for path in (metrics, details) if path is not None]
    if tracked:
        track_stage(
            "score",
            config_root=config_root,
            rows_paths=[output] if output else results,
            artifacts=extra,
        )
    return 0


def execute_explain(results: list[Path], task_id: str) -> int:
    """Print every scoring rule's decision for the rows of `task_id`."""
    from llm_eval.scoring import explain_text

    found = False
    for path in results:
        for row in read_rows(path):
            if row.task_id != task_id:
                continue
            found = True
            print(
                f"{row.model} / {row.benchmark} / {row.task_id} (epoch {row.epoch}): {row.status}"
            )
            print(f"  expected: {row.answer!r}  scorer: {row.scorer}")
            print(f"  response: {(row.response or '')[:300]!r}")
            if row.status == "error":
                print(f"  error row ({row.error.kind if row.error else '?'}): not scored")
                continue
            if row.cut_off:
                print("  the reply was cut off (token limit or max_response_chars)")
            traces = explain_text(
                row.response or "", row.answer_key(), kind=row.scorer, truncated=row.cut_off
            )
            for rule in traces:
                print(f"  {'MATCH' if rule.matched else '  -  '} {rule.rule}: {rule.detail}")
    if not found:
        raise UsageError(f"--explain: no row with task id {task_id!r} in the given files")
    return 0
