"""The report's "What this suite can resolve" section: the minimum detectable difference per
benchmark, then the item analysis (`reporting.items`) when the report has two or more models
or epochs: saturated, unsolved and separating items, suspected keys, and the readers'
difficulty beside the models' figure."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from llm_eval.reporting import items as it
from llm_eval.reporting import tables as tb
from llm_eval.reporting.escape import md_code
from llm_eval.reporting.md_format import escape, fmt_pct, fold_list, md_table

if TYPE_CHECKING:
    import pandas as pd

LEVELS = ("easy", "medium", "hard")
ITEM_HEADINGS = ("Benchmark", "Items", "Saturated", "Unsolved", "Separating", "Separating share",
                 "Detectable on the separating part")  # fmt: skip
DIFFICULTY_HEADINGS = ("Readers' difficulty", "Items", "Models' mean right share", "Saturated",
                       "Separating", "Unsolved")  # fmt: skip


def resolution_section(frame: pd.DataFrame) -> str:
    """What differences the suite can resolve, and which items still separate the models."""
    table = tb.detectable_differences(frame)
    if table.empty or not it.analysable(frame):
        return ""
    body = [
        [escape(r["benchmark"]), str(int(r["tasks"])), fmt_pct(r["mean"]), _mdd(r["mdd"])]
        for r in table.to_dict("records")
    ]
    text = [
        "## What this suite can resolve",
        "",
        "For two models at a benchmark's mean accuracy, paired on its tasks, the smallest "
        "difference a paired test finds at 80% power (5% two-sided); differences smaller than "
        "this are not resolvable here, whatever the point estimates say.",
        "",
        md_table(["Benchmark", "Tasks", "Mean accuracy", "Minimum detectable difference"], body),
    ]
    items = it.item_analysis(frame)
    if items:
        text += ["", _items_part(frame, items)]
    return "\n".join(text)


def _mdd(value: float | None) -> str:
    return "—" if value is None or value != value else f"{100 * float(value):.1f} pp"


def _items_part(frame: pd.DataFrame, items: list[it.Item]) -> str:
    """Item kinds per benchmark, suspected keys, difficulty against the models' figure."""
    summaries = it.benchmark_items(frame, items)
    order = tb.ordered_benchmarks([s.benchmark for s in summaries])
    summaries.sort(key=lambda s: order.index(s.benchmark))
    body = [
        [escape(s.benchmark), str(s.items), str(s.saturated), str(s.unsolved), str(s.separating),
         fmt_pct(s.separating_share), _mdd(s.separating_mdd)]
        for s in summaries
    ]  # fmt: skip
    text = [
        "### Items that still separate the models",
        "",
        "Per item, every answer of every model (and epoch) in this report: `saturated` when all "
        "are right, `unsolved` when none is, `separating` otherwise. Only separating items can "
        "tell the models apart; the last column is the smallest difference a paired test on "
        "them alone detects (80% power, 5% two-sided, at the models' mean accuracy there; `—` "
        "when not even 100 pp is). "
        "The per-item table is logged to MLflow as `items/item_analysis.json` on the report "
        "stage's run.",
        "",
        md_table(ITEM_HEADINGS, body),
        "",
        _suspected_keys(items),
    ]
    unsolved = [item for item in items if item.kind == it.UNSOLVED and not item.suspected_key]
    if unsolved:
        label = f"Unsolved without a shared wrong answer ({len(unsolved)})"
        text += ["", fold_list(label, [escape(item.task_id) for item in unsolved])]
    saturated = [item.task_id for item in items if item.kind == it.SATURATED]
    if saturated:
        label = f"Saturated items, every answer right ({len(saturated)})"
        text += ["", fold_list(label, [escape(task) for task in saturated])]
    difficulty = _difficulty_table(items)
    if difficulty:
        text += ["", difficulty]
    return "\n".join(text)


def _suspected_keys(items: list[it.Item]) -> str:
    """The suspected-key list: no model right, the same wrong answer from two or more."""
    suspects = [item for item in items if item.suspected_key]
    if not suspects:
        return "Suspected keys: none (no unsolved item drew the same wrong answer twice)."
    lines = [
        f"**Suspected keys** ({len(suspects)}): no answer right, and two or more models (or "
        "epochs) gave the same wrong answer, which may be the right one. Check each key:",
        "",
    ]
    for item in suspects:
        answer = md_code(item.shared_wrong_answer or "", 80)
        lines.append(
            f"- {escape(item.benchmark)} {escape(item.task_id)}: {answer} from "
            f"{item.shared_wrong_by} of {item.models} models"
            if item.models > 1
            else f"- {escape(item.benchmark)} {escape(item.task_id)}: {answer} in "
            f"{item.shared_wrong_by} of {item.answers} epochs"
        )
    return "\n".join(lines)


def _difficulty_table(items: list[it.Item]) -> str:
    """Readers' difficulty (kept as measured) against how the models did on those items."""
    rated = [item for item in items if item.difficulty in LEVELS]
    if not rated:
        return ""
    counts = Counter((item.difficulty, item.kind) for item in rated)
    shares: dict[str, list[float]] = {}
    for item in rated:
        shares.setdefault(str(item.difficulty), []).append(item.right_share)
    body = [
        [level, str(len(shares[level])), fmt_pct(sum(shares[level]) / len(shares[level])),
         *(str(counts[(level, kind)]) for kind in (it.SATURATED, it.SEPARATING, it.UNSOLVED))]
        for level in LEVELS
        if level in shares
    ]  # fmt: skip
    return "\n".join(
        [
            "Readers' difficulty (three blind readers, as in the task files) beside the models' "
            "figure on the same items:",
            "",
            md_table(DIFFICULTY_HEADINGS, body),
        ]
    )
