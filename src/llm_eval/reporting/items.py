"""Item analysis from the runs in a report: which items still separate the models.

With two or more answers per item (two models, or one model over several epochs), each item
is one of three kinds:

- `saturated`: every answer right; it separates nothing here;
- `unsolved`: no answer right; when two or more models (or, with one model, two or more
  epochs) gave the *same* wrong answer, the item is a **suspected key**: the shared answer
  may be the right one and the key wrong, so a person should look at it;
- `separating`: the answers disagree; only these items can tell the models apart.

Per benchmark, the share of separating items and the smallest difference a paired test on
them detects (`statistics.minimum_detectable_difference`, at the models' mean accuracy on
that part) say how much of the set still measures anything for the models run.

Error rows are left out (no answer); an `unsure` row is an answer, never a right one, and
never a shared wrong answer (its wording decides nothing). The readers' `difficulty` of a
task stays as measured; the models' figure (`right_share`) sits beside it in the table.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from llm_eval.redaction import redact
from llm_eval.reporting import statistics as st

if TYPE_CHECKING:
    import pandas as pd

SATURATED, UNSOLVED, SEPARATING = "saturated", "unsolved", "separating"

TABLE_COLUMNS: tuple[str, ...] = (
    "benchmark", "task_id", "difficulty", "answers", "right", "right_share", "models",
    "models_right", "kind", "suspected_key", "shared_wrong_answer", "shared_wrong_by",
)  # fmt: skip
"""Columns of the per-item table logged to MLflow, in order."""


@dataclass(frozen=True)
class Item:
    """One task's answers across the models (and epochs) of a report."""

    benchmark: str
    task_id: str
    difficulty: str | None
    answers: int
    right: int
    models: int
    models_right: int
    shared_wrong_answer: str | None
    shared_wrong_by: int

    @property
    def kind(self) -> str:
        if self.right == self.answers:
            return SATURATED
        return UNSOLVED if self.right == 0 else SEPARATING

    @property
    def suspected_key(self) -> bool:
        """No answer right, and the same wrong answer from two or more models (epochs)."""
        return self.kind == UNSOLVED and self.shared_wrong_by >= 2

    @property
    def right_share(self) -> float:
        return self.right / self.answers


@dataclass(frozen=True)
class BenchmarkItems:
    """One benchmark's item kinds and what its separating part can resolve."""

    benchmark: str
    items: int
    saturated: int
    unsolved: int
    separating: int
    suspected_keys: tuple[str, ...]
    separating_mean: float | None
    separating_mdd: float | None

    @property
    def separating_share(self) -> float:
        return self.separating / self.items if self.items else 0.0


def analysable(frame: pd.DataFrame) -> bool:
    """Whether the report has two or more models, or epochs, to compare item by item."""
    answered = frame[frame["status"] != "error"]
    return bool(answered["display"].nunique() >= 2 or answered["epoch"].nunique() >= 2)


def item_analysis(frame: pd.DataFrame) -> list[Item]:
    """One `Item` per (benchmark, task) with at least two answers, in the frame's order."""
    answered = frame[frame["status"] != "error"]
    many_models = answered["display"].nunique() >= 2
    items = []
    for (benchmark, task_id), group in answered.groupby(["benchmark", "task_id"], sort=False):
        if len(group) < 2:
            continue
        records = group.to_dict("records")
        shared, by = _shared_wrong_answer(records, by_model=many_models)
        items.append(
            Item(
                benchmark=str(benchmark),
                task_id=str(task_id),
                difficulty=_difficulty(records),
                answers=len(records),
                right=sum(r["status"] == "correct" for r in records),
                models=int(group["display"].nunique()),
                models_right=_models_right(records),
                shared_wrong_answer=shared,
                shared_wrong_by=by,
            )
        )
    return items


def _difficulty(records: Iterable[Mapping[str, Any]]) -> str | None:
    found = [r["difficulty"] for r in records if isinstance(r["difficulty"], str)]
    return found[0] if found else None


def _models_right(records: Iterable[Mapping[str, Any]]) -> int:
    """Models right on the item in more than half of their answered epochs."""
    tally: dict[str, list[bool]] = {}
    for r in records:
        tally.setdefault(r["display"], []).append(r["status"] == "correct")
    return sum(2 * sum(marks) > len(marks) for marks in tally.values())


def _shared_wrong_answer(
    records: Iterable[Mapping[str, Any]], *, by_model: bool
) -> tuple[str | None, int]:
    """The wrong answer given most often and by how many models (or answers, with one
    model); `(None, 0)` without a wrong answer. Answers match after case, accents and
    spacing are folded, so `Παρασκευή` and `παρασκευη` are one answer."""
    givers: dict[str, set[Any]] = {}
    shown: dict[str, str] = {}
    for index, r in enumerate(records):
        if r["status"] != "incorrect" or not isinstance(r["extracted"], str):
            continue
        key = fold(r["extracted"])
        if not key:
            continue
        shown.setdefault(key, r["extracted"].strip())
        givers.setdefault(key, set()).add(r["display"] if by_model else index)
    if not givers:
        return None, 0
    counts = Counter({key: len(who) for key, who in givers.items()})
    key, count = min(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return shown[key], count


def fold(text: str) -> str:
    """Case-, accent- and space-insensitive form of an answer."""
    stripped = unicodedata.normalize("NFD", text.casefold())
    plain = "".join(c for c in stripped if unicodedata.category(c) != "Mn")
    return " ".join(plain.split())


def benchmark_items(frame: pd.DataFrame, items: list[Item]) -> list[BenchmarkItems]:
    """Per benchmark (in `items`' order): item kinds, suspected keys and the difference a
    paired test on the separating items detects at the models' mean accuracy there."""
    from llm_eval.reporting.tables import accuracy_table

    by_benchmark: dict[str, list[Item]] = {}
    for item in items:
        by_benchmark.setdefault(item.benchmark, []).append(item)
    summaries = []
    for benchmark, group in by_benchmark.items():
        kinds = Counter(item.kind for item in group)
        separating = {item.task_id for item in group if item.kind == SEPARATING}
        part = frame[(frame["benchmark"] == benchmark) & frame["task_id"].isin(separating)]
        accuracies = accuracy_table(part, ["display"])["strict_accuracy"].dropna()
        mean = float(accuracies.mean()) if separating and not accuracies.empty else None
        mdd = st.minimum_detectable_difference(len(separating), mean) if mean is not None else None
        summaries.append(
            BenchmarkItems(
                benchmark=benchmark,
                items=len(group),
                saturated=kinds[SATURATED],
                unsolved=kinds[UNSOLVED],
                separating=kinds[SEPARATING],
                suspected_keys=tuple(item.task_id for item in group if item.suspected_key),
                separating_mean=mean,
                separating_mdd=mdd,
            )
        )
    return summaries


def item_table(items: Iterable[Item]) -> dict[str, list[Any]]:
    """The per-item table as columns (what `MlflowClient.log_table` takes); shared wrong
    answers are redacted like every logged model output."""
    table: dict[str, list[Any]] = {name: [] for name in TABLE_COLUMNS}
    for item in items:
        values = {
            "benchmark": item.benchmark,
            "task_id": item.task_id,
            "difficulty": item.difficulty,
            "answers": item.answers,
            "right": item.right,
            "right_share": round(item.right_share, 4),
            "models": item.models,
            "models_right": item.models_right,
            "kind": item.kind,
            "suspected_key": item.suspected_key,
            "shared_wrong_answer": redact(item.shared_wrong_answer)
            if item.shared_wrong_answer
            else None,
            "shared_wrong_by": item.shared_wrong_by,
        }
        for name in TABLE_COLUMNS:
            table[name].append(values[name])
    return table


def rows_item_table(rows: Iterable[Any]) -> dict[str, list[Any]] | None:
    """The per-item table of trace rows, or None when they hold fewer than two answers per
    item to compare (one model, one epoch)."""
    from llm_eval.reporting.tables import rows_frame

    frame = rows_frame(list(rows))
    if frame.empty or not analysable(frame):
        return None
    return item_table(item_analysis(frame))
