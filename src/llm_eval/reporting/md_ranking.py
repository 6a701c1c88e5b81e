"""The report's verdict on which model to choose: the bottom line and the paired comparisons.

Both say when a gap is resolved (McNemar exact p < 0.05) and, where scorers left rows unsure,
whether settling those rows could reverse the ranking or the verdict (`could_reverse` from
`statistics.compare_verdicts`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from llm_eval.reporting import tables as tb
from llm_eval.reporting.escape import md_code, md_text
from llm_eval.reporting.md_format import (
    escape,
    fmt_accuracy,
    fmt_band,
    fmt_cost,
    fmt_diff,
    fmt_p,
    fmt_seconds,
    is_missing,
    md_table,
)
from llm_eval.reporting.plan import outdated_text
from llm_eval.reporting.statistics import SIGNIFICANCE

if TYPE_CHECKING:
    import pandas as pd

    from llm_eval.reporting.plan import StopNote

COULD_REVERSE = "the unsure rows could reverse this"
"""What the report says of a comparison whose outcome the unsure rows could change."""


@dataclass(frozen=True)
class SharedTables:
    """What more than one section shows, computed once per report."""

    models: pd.DataFrame
    """`tables.model_table`: one row per model over the whole suite."""
    paired: pd.DataFrame
    """`tables.paired_table`: one row per pair of models."""
    resolution: str
    """The suite's minimum detectable difference, as a sentence."""
    coverage: pd.DataFrame
    """`tables.coverage_table`: rows, missing rows and completeness per model."""
    stops: tuple[StopNote, ...] = ()
    """Runs behind the report that stopped before their plan was done."""


# --------------------------------------------------------------------------- bottom line


def bottom_line_section(shared: SharedTables) -> str:
    """Models ranked by strict accuracy, and which neighbours the paired test tells apart."""
    table = shared.models.sort_values(
        ["strict_accuracy", "display"], ascending=[False, True], kind="stable"
    )
    records = table.to_dict("records")
    coverage = {r["display"]: r for r in shared.coverage.to_dict("records")}
    lines = ["## Bottom line", ""]
    lines += _stopped_lines(shared.stops)
    for rank, r in enumerate(records, start=1):
        accuracy = fmt_accuracy(r["strict_accuracy"], r["strict_lo"], r["strict_hi"])
        mark = _incomplete_mark(coverage.get(r["display"]))
        band = _band_clause(r)
        spend = _cost_latency_clause(r)
        lines.append(
            f"{rank}. **{escape(r['display'])}**: {accuracy} strict accuracy{band}; {spend}{mark}"
        )
    lines += [
        f"- **{escape(name)}**: no row at all{_incomplete_mark(c)}"
        for name, c in coverage.items()
        if not c["rows"]
    ]
    if len(records) < 2:
        return "\n".join(lines)
    comparisons = shared.paired.to_dict("records")
    paired = {frozenset((p["model_a"], p["model_b"])): p for p in comparisons}
    lines.append("")
    for upper, lower in zip(records, records[1:], strict=False):
        pair = paired.get(frozenset((upper["display"], lower["display"])))
        lines.append(
            f"- {escape(upper['display'])} ahead of {escape(lower['display'])}: {_verdict(pair)}"
        )
    lines += ["", shared.resolution]
    return "\n".join(lines)


def _cost_latency_clause(r: Mapping[str, Any]) -> str:
    """`cost $0.4210 (configured), p50 latency 0.81 s (p95 1.26 s)`: what the accuracy costs
    in money and waiting, so the choice can be made from the bottom line alone."""
    cost = fmt_cost(r["cost_usd"], int(r["cost_usd_unknown"]))
    if isinstance(r.get("cost_source"), str):
        cost += f" ({escape(r['cost_source'])})"
    return f"cost {cost}, p50 latency {fmt_seconds(r['p50'])} (p95 {fmt_seconds(r['p95'])})"


def _band_clause(r: Mapping[str, Any]) -> str:
    """`, 85.2–88.0% as its 3 unsure rows turn out wrong or right`, or `` without any."""
    unsure = int(r["unsure"])
    if not unsure:
        return ""
    rows = "row turns" if unsure == 1 else "rows turn"
    band = fmt_band(r["strict_accuracy"], r["strict_high"])
    return f", {band} as its {unsure} unsure {rows} out wrong or right"


def _verdict(pair: Mapping[str, Any] | None) -> str:
    """Whether the paired test resolves a gap, and whether the unsure rows could undo it."""
    if pair is None or not pair["n"]:
        return "no paired rows to compare"
    p = float(pair["p"])
    if p < SIGNIFICANCE:
        verdict = f"resolved (McNemar exact {_p_clause(p)})"
    else:
        verdict = (
            f"**not resolved** (McNemar exact {_p_clause(p)}): treat them as tied on this suite"
        )
    return verdict + (f"; **{COULD_REVERSE}**" if pair["could_reverse"] else "")


def _stopped_lines(stops: Sequence[StopNote]) -> list[str]:
    """A line per run that stopped early: why, when, and how to complete it."""
    lines = []
    for stop in stops:
        if stop.kind == "overshoot":  # complete, but the spend passed a cap: say by how much
            lines += [f"The run into {md_code(stop.results)} {md_text(stop.reason())}.", ""]
            continue
        line = (
            f"**INCOMPLETE: the run into {md_code(stop.results)} {md_text(stop.reason())} "
            f"at {md_text(stop.at)}.**"
        )
        if stop.resume_command:
            line += f" Complete it with {md_code(stop.resume_command)}."
        lines += [line, ""]
    return lines


def incomplete_note(coverage: Sequence[Mapping[str, Any]]) -> str:
    """Why the models of these coverage records are marked INCOMPLETE."""
    names = ", ".join(escape(r["display"]) for r in coverage)
    note = (
        f"**INCOMPLETE:** {names}. A model is incomplete when any row ended in an error, a "
        "planned (or expected) row is missing, or a row answers a task its file no longer "
        "holds as it was; rerun with `--resume` to fill the gaps."
    )
    left_out = [f"{escape(r['display'])}: {outdated_text(r['outdated'])}"
                for r in coverage if r.get("outdated")]  # fmt: skip
    if left_out:
        note += " Left out of every figure, as the task files changed since: "
        note += "; ".join(left_out) + "."
    return note


def _incomplete_mark(coverage: Mapping[str, Any] | None) -> str:
    """` — **INCOMPLETE**: 40 of 156 rows done (missing ...; 3 error rows)`, or nothing."""
    if coverage is None or coverage["complete"]:
        return ""
    rows, missing = int(coverage["rows"]), int(coverage["missing_total"])
    planned = coverage["planned"]
    planned = int(planned) if planned is not None and planned == planned else rows + missing
    parts = []
    if missing:
        listed = ", ".join(f"{escape(name)}: {n}" for name, n in coverage["missing"].items())
        parts.append(f"missing {listed}")
    if int(coverage["errors"]):
        parts.append(f"{int(coverage['errors'])} error rows")
    if coverage.get("outdated"):
        parts.append(f"left out: {outdated_text(coverage['outdated'])}")
    return f" — **INCOMPLETE**: {rows} of {planned} rows done ({'; '.join(parts)})"


def _p_clause(p: float) -> str:
    """`p = 0.0312`, or `p < 0.0001` for the smallest values."""
    text = fmt_p(p)
    return f"p < {text[1:]}" if text.startswith("<") else f"p = {text}"


# --------------------------------------------------------------------------- paired


def paired_section(shared: SharedTables) -> str:
    """Paired McNemar and bootstrap comparison for every pair of models, with the test
    re-run at both ends of the unsure band."""
    table = shared.paired
    if table.empty:
        return ""
    headers = [
        "Model A", "Model B", "n paired", "Both right", "Only A", "Only B",
        "Accuracy A − B", "McNemar exact p", "Unsure A / B", "Unsure all for A; all for B",
    ]  # fmt: skip
    body = [_paired_row(r) for r in table.to_dict("records")]
    note = (
        "Rows are paired on benchmark, task and epoch over the whole suite; a pair is left "
        "out when either row is an error. The difference interval is a paired bootstrap "
        "(2000 resamples, seed 0). An unsure row counts as not correct in the table and the "
        "test, as in the accuracies; the last column re-runs the test with A's unsure rows "
        "right and B's wrong, then the reverse, and says "
        f'"{COULD_REVERSE}" when either end changes who is ahead or whether p < 0.05. '
        + shared.resolution
    )
    return "## Paired comparisons\n\n" + md_table(headers, body) + "\n\n" + note


def suite_resolution(frame: pd.DataFrame) -> str:
    """The whole suite's minimum detectable difference, as a sentence."""
    mdd = tb.suite_detectable_difference(frame)
    if mdd is None:
        return "With this few tasks no difference is resolvable at 80% power."
    return (
        f"Over the whole suite ({tb.suite_size(frame)} tasks), differences smaller than "
        f"{100 * mdd:.1f} pp are not resolvable here (80% power, 5% two-sided); per "
        "benchmark, see the section below."
    )


def _paired_row(r: Mapping[str, Any]) -> list[str]:
    """Cells of one pair's comparison row."""
    return [
        escape(r["model_a"]),
        escape(r["model_b"]),
        str(int(r["n"])),
        str(int(r["both"])),
        str(int(r["only_a"])),
        str(int(r["only_b"])),
        fmt_diff(r["diff"], r["diff_lo"], r["diff_hi"]),
        fmt_p(float(r["p"])),
        f"{int(r['unsure_a'])} / {int(r['unsure_b'])}",
        _band_ends(r),
    ]


def _band_ends(r: Mapping[str, Any]) -> str:
    """`+6.0 pp (p = 0.0020); +1.0 pp (p = 1.0000)`, then whether that could reverse the
    comparison; `—` when no paired row is unsure."""
    if is_missing(r["diff_favour_a"]):
        return "—"
    ends = "; ".join(
        f"{100 * float(r[f'diff_favour_{side}']):+.1f} pp "
        f"({_p_clause(float(r[f'p_favour_{side}']))})"
        for side in ("a", "b")
    )
    return ends + (f": {COULD_REVERSE}" if r["could_reverse"] else "")
