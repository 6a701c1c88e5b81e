"""`llm-eval review`: a person settles the replies the rules left unsure, one by one, into
reviews/verdicts.jsonl; or pulls the verdicts people added to the traces in MLflow."""

from __future__ import annotations

import getpass
import os
import textwrap
from collections.abc import Sequence
from pathlib import Path

from llm_eval.errors import UsageError
from llm_eval.runner.trace_io import read_rows
from llm_eval.schemas import TraceRow
from llm_eval.scoring.reviews import (
    REVIEWS_FILE,
    Review,
    ReviewKey,
    append_records,
    now_stamp,
    read_reviews,
    review_key,
)

CHOICES = {
    "r": "correct", "right": "correct",
    "w": "incorrect", "wrong": "incorrect",
    "s": "skip", "skip": "skip",
    "q": "quit", "quit": "quit",
}  # fmt: skip
PROMPT = "right / wrong / skip / quit [r/w/s/q] (a note may follow, e.g. 'w gives the year'): "
SHOWN_CHARS = 4000


def _read_all(results: Sequence[Path]) -> list[TraceRow]:
    rows: list[TraceRow] = []
    for path in results:
        if not path.is_file():
            raise UsageError(f"--results: no such file {path}")
        rows += read_rows(path)
    return rows


def pending_reviews(
    rows: Sequence[TraceRow], decided: dict[ReviewKey, Review]
) -> list[tuple[TraceRow, int]]:
    """The unsure replies nobody has decided, once each, with how many rows share each."""
    waiting: dict[ReviewKey, list[TraceRow]] = {}
    for row in rows:
        key = review_key(row)
        if row.status == "unsure" and row.score is not None and key not in decided:
            waiting.setdefault(key, []).append(row)
    return [(same[0], len(same)) for same in waiting.values()]


def execute_review(results: Sequence[Path], reviewer: str | None, config_root: Path) -> int:
    """Ask about each pending reply; every decision is appended at once (quitting or a
    crash loses none)."""
    path = config_root / REVIEWS_FILE
    decided = read_reviews(path)
    pending = pending_reviews(_read_all(results), decided)
    name = reviewer or os.environ.get("USER") or getpass.getuser()
    print(f"{len(pending)} unsure repl(ies) to review; decisions go to {path} as {name!r}")
    counts = {"correct": 0, "incorrect": 0, "skip": 0}
    for number, (row, shared) in enumerate(pending, start=1):
        print(describe(row, number, len(pending), shared))
        answer = ask()
        if answer is None:
            break
        choice, note = answer
        counts[choice] += 1
        if choice != "skip":
            append_records(path, [decision(row, choice, name, note)])
    left = len(pending) - sum(counts.values())
    print(
        f"{counts['correct']} right, {counts['incorrect']} wrong, {counts['skip']} skipped, "
        f"{left} not reached. `llm-eval score` (or `dvc repro`) applies them."
    )
    return 0


def decision(row: TraceRow, choice: str, reviewer: str, note: str | None) -> Review:
    benchmark, task_id, answer, digest = review_key(row)
    return Review(
        benchmark=benchmark, task_id=task_id, answer=answer, reply_sha256=digest,
        verdict="correct" if choice == "correct" else "incorrect", reviewer=reviewer,
        timestamp=now_stamp(), note=note or None,
    )  # fmt: skip


def ask() -> tuple[str, str | None] | None:
    """(choice, note) from one line of input; None to quit (also at end of input)."""
    while True:
        try:
            line = input(PROMPT).strip()
        except EOFError:
            print()
            return None
        word, _, note = line.partition(" ")
        choice = CHOICES.get(word.lower())
        if choice == "quit":
            return None
        if choice is not None:
            return choice, note.strip() or None
        print("  answer r (right), w (wrong), s (skip) or q (quit)")


def describe(row: TraceRow, number: int, total: int, shared: int) -> str:
    """What a reviewer needs to decide: the task, the key, the reply and the scorer's doubt."""
    assert row.score is not None
    question = "\n\n".join(
        str(message.get("content")) for message in row.messages if message.get("role") == "user"
    )
    also = f"; the same reply in {shared - 1} other row(s)" if shared > 1 else ""
    score = row.score
    lines = [
        "",
        f"[{number}/{total}] {row.benchmark} / {row.task_id} "
        f"(model {row.model}, epoch {row.epoch}{also})",
        "Question:",
        _indented(question),
        f"Expected: {row.answer}",
    ]
    if row.accepted_answers:
        lines.append(f"Also accepted: {', '.join(row.accepted_answers)}")
    if row.distractors:
        lines.append(f"Known wrong (decoys): {', '.join(row.distractors)}")
    lines += [
        "Reply:",
        _indented(row.response or ""),
        f"Scorer: unsure ({score.unsure_reason or '?'}) by {score.method}"
        + (f"; extracted {score.extracted!r}" if score.extracted is not None else "")
        + (f"; {score.detail}" if score.detail else ""),
    ]
    return "\n".join(lines)


def _indented(text: str) -> str:
    if len(text) > SHOWN_CHARS:
        text = text[:SHOWN_CHARS] + f" [... {len(text) - SHOWN_CHARS} more characters]"
    return textwrap.indent(text.strip() or "(empty)", "  ")


def execute_pull(results: Sequence[Path], config_root: Path) -> int:
    """Append to the file the verdicts people added to these rows' traces in MLflow."""
    from llm_eval.tracking import prepare_tracking, wait_for_mlflow
    from llm_eval.tracking.context import build_context, read_params
    from llm_eval.tracking.decisions import pull_reviews
    from llm_eval.tracking.record import store_view, unique_rows
    from llm_eval.tracking.stages import quiet_mlflow
    from llm_eval.tracking.store import client_for, experiment_id, lock_directory, store_lock

    rows = unique_rows(_read_all(results))
    if not prepare_tracking(config_root, needs_mlflow=True):
        raise UsageError("tracking is off (LLM_EVAL_TRACKING=0 or tracking.enabled: false)")
    wait_for_mlflow()
    quiet_mlflow()
    path = config_root / REVIEWS_FILE
    ctx = build_context("review", config_root, read_params(config_root) or {})
    with store_lock(lock_directory(ctx)):
        client = client_for(ctx)
        view = store_view(client, experiment_id(client, ctx), rows, verdicts=True)
    pulled = pull_reviews(rows, view.verdicts, read_reviews(path))
    append_records(path, pulled)
    print(
        f"{len(pulled)} verdict(s) pulled from MLflow into {path}"
        + (": `llm-eval score` (or `dvc repro`) applies them." if pulled else ".")
    )
    return 0
