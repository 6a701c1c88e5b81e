"""`llm-eval score`: rescore trace rows (no model call), write metrics, explain one verdict."""

from __future__ import annotations

import sys
from pathlib import Path

from llm_eval.cli.judge import JudgeStep
from llm_eval.errors import UsageError
from llm_eval.reporting.metrics import benchmark_metrics, headline_metrics
from llm_eval.runner.run_record import copy_record
from llm_eval.runner.trace_io import dump_json, read_rows, write_rows
from llm_eval.schemas import TraceRow
from llm_eval.scoring.current_key import KeyChanges, current_keys, with_current_key
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
    """Rescore each file with today's keys (in place unless `output`), print what changed.

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
    files = [(path, read_rows(path)) for path in results]
    keys = current_keys(config_root, {row.benchmark for _, rows in files for row in rows})
    all_rows = []
    for path, rows in files:
        rescored = apply_reviews(score_rows(with_current_key(row, keys) for row in rows), reviews)
        if judging is not None:
            rescored = judging.settle(path, rescored)
        changed = sum(a.status != b.status for a, b in zip(rows, rescored, strict=True))
        write_rows(output or path, rescored)
        if output is not None:  # the run's plan and stop reason travel with its rows
            copy_record(path, output)
        all_rows += rescored
        print(f"{path}: {len(rescored)} rows scored, {changed} verdict(s) changed")
        _print_key_changes(KeyChanges.of(rescored))
        people = sum(1 for row in rescored if row.score and row.score.source == "human")
        if people:
            print(f"{path}: {people} verdict(s) decided by people ({REVIEWS_FILE})")
    counted = _current_rows(all_rows, config_root)  # every row is rescored; not all counted
    per_benchmark = benchmark_metrics(counted)
    if metrics is not None:
        dump_json(metrics, headline_metrics(counted, per_benchmark.get("overall")))
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


def _current_rows(rows: list[TraceRow], config_root: Path) -> list[TraceRow]:
    """The rows metrics may count: not those of deleted tasks or changed questions."""
    from llm_eval.config.validation import validate
    from llm_eval.reporting.task_check import checked_rows

    return checked_rows(rows, validate(str(config_root)).questions, None)[0]


def _verdict_line(row: TraceRow) -> str:
    """The row's verdict as the scorer gives it today, with the class of an unsure one."""
    from llm_eval.scoring import UNSURE_REASONS, score_key

    result = score_key(row.response or "", row.answer_key(), row.scorer, truncated=row.cut_off)
    if result.verdict != "unsure":
        return f"verdict: {result.verdict} ({result.method})"
    reason = result.unsure_reason or "?"
    return f"verdict: unsure ({reason}: {UNSURE_REASONS.get(reason, 'no description')})"


def _print_key_changes(changes: KeyChanges) -> None:
    summary = changes.summary()
    if summary is not None:
        print(summary)
    for warning in changes.warnings():
        print(warning, file=sys.stderr)


def execute_explain(results: list[Path], task_id: str, config_root: Path = Path(".")) -> int:
    """Print every scoring rule's decision for the rows of `task_id`, under today's key."""
    from llm_eval.scoring import explain_text

    rows = [row for path in results for row in read_rows(path) if row.task_id == task_id]
    if not rows:
        raise UsageError(f"--explain: no row with task id {task_id!r} in the given files")
    keys = current_keys(config_root, {row.benchmark for row in rows})
    for row in (with_current_key(row, keys) for row in rows):
        print(f"{row.model} / {row.benchmark} / {row.task_id} (epoch {row.epoch}): {row.status}")
        print(f"  expected: {row.answer!r}  scorer: {row.scorer}")
        if row.run_key is not None:
            print(f"  (the run's key: {row.run_key.answer!r}  scorer: {row.run_key.scorer})")
        elif row.key_unchecked is not None:
            print(f"  (today's key not applied, {row.key_unchecked}: the key it ran under)")
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
        print(f"  {_verdict_line(row)}")
    return 0
