"""Aggregate trace rows into tidy pandas DataFrames that the report and the charts share.

pandas is imported inside each function, never at module level, so importing the reporting
package stays cheap for the CLI. Statistics come from `llm_eval.reporting.statistics`;
this module only groups rows and attaches them.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from llm_eval.redaction import redact
from llm_eval.reporting import statistics as st

if TYPE_CHECKING:
    import pandas as pd

    from llm_eval.reporting.plan import RunPlan
    from llm_eval.schemas import TraceRow

BENCHMARK_ORDER: tuple[str, ...] = (
    "language_understanding",
    "greek_messages",
    "sample_math",
    "sample_logic",
    "sample_multiturn",
    "sample_tools",
    "aimo3_reference",
    "aimo3_reference_multiturn",
    "aimo3_reference_python_tools",
)
"""Report order of the suite's benchmarks; others follow alphabetically."""

AIMO3_MODES: dict[str, str] = {
    "aimo3_reference": "single turn",
    "aimo3_reference_multiturn": "multi-round",
    "aimo3_reference_python_tools": "Python tools",
}
"""The three AIMO3 benchmarks and the mode name each one stands for."""

LANGUAGE_BENCHMARK = "language_understanding"
GREEK_BENCHMARKS: tuple[str, ...] = ("language_understanding", "greek_messages")
"""The Greek reading sets: shown by category and difficulty, and resolved together."""
GREEK_TOGETHER = "Greek sets together"

FRAME_COLUMNS: tuple[str, ...] = (
    "model", "display", "simulated", "benchmark", "task_id", "category", "epoch", "status",
    "answer", "extracted", "method", "source", "latency_s", "total_tokens", "reasoning_tokens",
    "cost_usd", "cost_source", "error_kind", "error_message", "difficulty", "run_mode",
)  # fmt: skip


# --------------------------------------------------------------------------- frame


def rows_frame(rows: Sequence[TraceRow]) -> pd.DataFrame:
    """One DataFrame row per trace row, with the fields the report uses, in a stable order."""
    import pandas as pd

    displays = display_names(rows)
    records = [_row_record(row, displays[row.model]) for row in rows]
    frame = pd.DataFrame.from_records(records, columns=list(FRAME_COLUMNS))
    frame["bench_rank"] = frame["benchmark"].map(_benchmark_rank(frame["benchmark"]))
    frame = frame.sort_values(["display", "bench_rank", "task_id", "epoch"], kind="stable")
    return frame.reset_index(drop=True)


def _row_record(row: TraceRow, display: str) -> dict[str, Any]:
    """Flatten the parts of one TraceRow the report needs into a plain dict."""
    return {
        "model": row.model,
        "display": display,
        "simulated": row.simulated,
        "benchmark": row.benchmark,
        "task_id": row.task_id,
        "category": row.category,
        "epoch": row.epoch,
        "status": row.status,
        "answer": row.answer,
        "extracted": row.score.extracted if row.score else None,
        "method": row.score.method if row.score else None,
        "source": row.score.source if row.score else None,
        "latency_s": row.latency_s,
        "total_tokens": row.usage.total_tokens,
        "reasoning_tokens": row.usage.reasoning_tokens,
        "cost_usd": row.usage.cost_usd,
        "cost_source": row.usage.cost_source,
        "error_kind": row.error.kind if row.error else None,
        "error_message": row.error.message if row.error else None,
        "difficulty": row.difficulty,
        "run_mode": run_mode(row.settings.get("reasoning_effort")),
    }


def run_mode(reasoning_effort: object) -> str:
    """How a model was run, in words: `thinking disabled`, `high thinking`, `standard`."""
    if reasoning_effort in (None, ""):
        return "standard"
    if reasoning_effort == "none":
        return "thinking disabled"
    return f"{reasoning_effort} thinking"


def display_names(rows: Iterable[TraceRow]) -> dict[str, str]:
    """Human label per model id, redacted, `(simulated)` appended for simulated models.

    Two models sharing a label would merge in every table, so such labels get the model id.
    """
    labels: dict[str, str] = {}
    for row in rows:
        suffix = " (simulated)" if row.simulated else ""
        # A label comes from configs/models.yaml as typed: it may hold a pasted secret.
        labels.setdefault(row.model, f"{redact(row.model_label or row.model)}{suffix}")
    counts: dict[str, int] = {}
    for label in labels.values():
        counts[label] = counts.get(label, 0) + 1
    return {m: (f"{lab} [{m}]" if counts[lab] > 1 else lab) for m, lab in labels.items()}


def ordered_benchmarks(benchmarks: Iterable[str]) -> list[str]:
    """The distinct benchmarks in report order: the suite's order, then alphabetical."""
    ranks = _benchmark_rank(benchmarks)
    return sorted(ranks, key=lambda name: ranks[name])


def _benchmark_rank(benchmarks: Iterable[str]) -> dict[str, int]:
    """Sort rank of each distinct benchmark name."""
    known = {name: i for i, name in enumerate(BENCHMARK_ORDER)}
    extra = sorted(set(benchmarks) - known.keys())
    ranks = {name: known[name] for name in set(benchmarks) & known.keys()}
    ranks.update({name: len(known) + i for i, name in enumerate(extra)})
    return ranks


def ordered_models(frame: pd.DataFrame) -> list[str]:
    """Model display names in report order (sorted, so input order never matters)."""
    return sorted(frame["display"].unique().tolist())


# --------------------------------------------------------------------------- accuracy


def accuracy_table(frame: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """Status counts per group with strict and valid-subset accuracy, their Wilson intervals
    and the tops of their unsure bands (`strict_high`, `valid_high`)."""
    import pandas as pd

    if frame.empty:
        return pd.DataFrame(columns=[*by, *_SUMMARY_COLUMNS])
    groups = frame.groupby(list(by), sort=True, dropna=False)["status"]
    counts = groups.value_counts().unstack(fill_value=0)
    counts = counts.reindex(columns=["correct", "incorrect", "unsure", "error"], fill_value=0)
    records = [
        {**dict(zip(by, _as_tuple(key), strict=True)), **_summary_record(row)}
        for key, row in counts.iterrows()
    ]
    return pd.DataFrame.from_records(records, columns=[*by, *_SUMMARY_COLUMNS])


_SUMMARY_COLUMNS = (
    "correct", "incorrect", "unsure", "errors", "total", "strict_accuracy", "strict_lo",
    "strict_hi", "strict_high", "valid_accuracy", "valid_lo", "valid_hi", "valid_high",
)  # fmt: skip


def _summary_record(counts: pd.Series) -> dict[str, Any]:
    """Accuracy summary of one group's status counts, as flat columns."""
    summary = st.accuracy_summary(
        int(counts["correct"]),
        int(counts["incorrect"]),
        int(counts["error"]),
        unsure=int(counts["unsure"]),
    )
    return {
        "correct": summary.correct,
        "incorrect": summary.incorrect,
        "unsure": summary.unsure,
        "errors": summary.errors,
        "total": summary.total,
        "strict_accuracy": summary.strict_accuracy,
        "strict_lo": summary.strict_interval[0],
        "strict_hi": summary.strict_interval[1],
        "strict_high": summary.strict_high,
        "valid_accuracy": summary.valid_accuracy,
        "valid_lo": summary.valid_interval[0],
        "valid_hi": summary.valid_interval[1],
        "valid_high": summary.valid_high,
    }


def _as_tuple(key: Any) -> tuple[Any, ...]:
    """groupby keys are scalars for one column and tuples for several."""
    return key if isinstance(key, tuple) else (key,)


def benchmark_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Accuracy, distinct tasks and latency percentiles per model x benchmark, in report order."""
    keys = ["display", "benchmark"]
    table = accuracy_table(frame, keys)
    table = table.merge(_latency_table(frame, keys), on=keys, how="left")
    tasks = frame.groupby(keys)["task_id"].nunique().rename("tasks").reset_index()
    table = table.merge(tasks, on=keys, how="left")
    ranks = _benchmark_rank(table["benchmark"])
    order = table["benchmark"].map(ranks)
    return table.assign(_rank=order).sort_values(["_rank", "display"]).drop(columns="_rank")


def model_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Full-suite accuracy, tokens, latency and cost per model."""
    table = accuracy_table(frame, ["display"])
    table = table.merge(_latency_table(frame, ["display"]), on="display", how="left")
    return table.merge(_usage_table(frame), on="display", how="left")


def language_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Per model on `language_understanding` alone: run mode, accuracy, mean latency, tokens."""
    subset = frame[frame["benchmark"] == LANGUAGE_BENCHMARK]
    table = accuracy_table(subset, ["display"])
    if table.empty:
        return table
    table = table.merge(_latency_table(subset, ["display"]), on="display", how="left")
    modes = subset.groupby("display")["run_mode"].agg(lambda m: ", ".join(sorted(set(m))))
    tokens = subset.groupby("display")["total_tokens"].agg(
        lambda t: float(t.dropna().sum()) if t.notna().any() else None
    )
    return table.assign(
        run_mode=table["display"].map(modes), total_tokens=table["display"].map(tokens)
    )


def category_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Accuracy per Greek benchmark x category x model (empty without Greek rows)."""
    subset = frame[frame["benchmark"].isin(GREEK_BENCHMARKS)]
    return accuracy_table(subset, ["benchmark", "category", "display"])


def difficulty_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Accuracy per Greek benchmark x difficulty x model (empty without difficulties)."""
    subset = frame[frame["benchmark"].isin(GREEK_BENCHMARKS) & frame["difficulty"].notna()]
    return accuracy_table(subset, ["benchmark", "difficulty", "display"])


def detectable_differences(frame: pd.DataFrame) -> pd.DataFrame:
    """Per benchmark: tasks, the models' mean accuracy and the minimum detectable difference.

    The difference is for two models at the benchmark's mean (strict) accuracy, paired on its
    tasks, 5% two-sided, 80% power.
    """
    import pandas as pd

    records = []
    for benchmark, group in frame.groupby("benchmark", sort=False):
        tasks = int(group["task_id"].nunique())
        found = _mean_and_detectable(group, tasks)
        if found is not None:
            mean, mdd = found
            records.append({"benchmark": benchmark, "tasks": tasks, "mean": mean, "mdd": mdd})
    table = pd.DataFrame.from_records(records, columns=["benchmark", "tasks", "mean", "mdd"])
    order = _benchmark_rank(table["benchmark"])
    table = table.sort_values("benchmark", key=lambda s: s.map(order)).reset_index(drop=True)
    greek = frame[frame["benchmark"].isin(GREEK_BENCHMARKS)]
    if greek["benchmark"].nunique() > 1:
        tasks = suite_size(greek)
        found = _mean_and_detectable(greek, tasks)
        if found is not None:
            together = {"benchmark": GREEK_TOGETHER, "tasks": tasks, "mean": found[0],
                        "mdd": found[1]}  # fmt: skip
            table = pd.concat([table, pd.DataFrame([together])], ignore_index=True)
    return table


def suite_size(frame: pd.DataFrame) -> int:
    """Distinct tasks of the whole suite (benchmark x task id)."""
    return int(frame[["benchmark", "task_id"]].drop_duplicates().shape[0])


def suite_detectable_difference(frame: pd.DataFrame) -> float | None:
    """The minimum detectable difference over the whole suite, at the models' mean accuracy."""
    found = _mean_and_detectable(frame, suite_size(frame))
    return found[1] if found is not None else None


def _mean_and_detectable(frame: pd.DataFrame, tasks: int) -> tuple[float, float | None] | None:
    """The models' mean strict accuracy over `frame` and the difference `tasks` paired tasks
    detect at that accuracy; None when no model has an accuracy there."""
    per_model = accuracy_table(frame, ["display"])["strict_accuracy"].dropna()
    if per_model.empty:
        return None
    mean = float(per_model.mean())
    return mean, st.minimum_detectable_difference(tasks, mean)


# --------------------------------------------------------------------------- latency, usage


def _latency_table(frame: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Mean, p50 and p95 latency per group over rows that finished (not error rows).

    An error row's wall time measures timeouts and retries, not the model answering.
    """
    import pandas as pd

    records = []
    for key, group in frame.groupby(by, sort=True):
        finished = (group["status"] != "error") & group["latency_s"].notna()
        values = group.loc[finished, "latency_s"].astype(float).tolist()
        records.append({**dict(zip(by, _as_tuple(key), strict=True)), **_latency_stats(values)})
    return pd.DataFrame.from_records(records, columns=[*by, "latency_mean", "p50", "p95"])


def _latency_stats(values: list[float]) -> dict[str, float | None]:
    """Mean, p50 and p95 of a list of latencies; None when there are none."""
    if not values:
        return {"latency_mean": None, "p50": None, "p95": None}
    return {
        "latency_mean": sum(values) / len(values),
        "p50": st.percentile(values, 50),
        "p95": st.percentile(values, 95),
    }


def _usage_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Token, reasoning-token and cost sums per model, with how many rows were unknown."""
    import pandas as pd

    records = []
    for display, group in frame.groupby("display", sort=True):
        record: dict[str, Any] = {"display": display}
        for column in ("total_tokens", "reasoning_tokens", "cost_usd"):
            known = group[column].dropna()
            record[column] = float(known.sum()) if len(known) else None
            record[f"{column}_unknown"] = int(group[column].isna().sum())
        sources = sorted(set(group["cost_source"].dropna()))
        record["cost_source"] = ", ".join(sources) if sources else None
        records.append(record)
    return pd.DataFrame.from_records(records)


# --------------------------------------------------------------------------- coverage


def coverage_table(
    frame: pd.DataFrame,
    expected_tasks: Mapping[str, int] | None = None,
    plan: RunPlan | None = None,
) -> pd.DataFrame:
    """Per model: rows, errors by kind, missing tasks per benchmark, both accuracies, status.

    A model is complete only with no error rows, no missing rows and no row left out for an
    edited task file (`plan.outdated`). Missing rows are counted against the run's plan
    (`plan`, from its run record) when there is one, else against `expected_tasks` (distinct
    tasks per benchmark). A planned model with no row at all is listed too, everything missing.
    """
    import pandas as pd

    summary = accuracy_table(frame, ["display"]).set_index("display")
    records = []
    for display, group in frame.groupby("display", sort=True):
        missing = missing_rows(group, expected_tasks, plan)
        outdated = dict(plan.outdated.get(group["model"].iloc[0], {})) if plan else {}
        row = summary.loc[display]
        records.append(
            {
                "display": display,
                "planned": plan.total(group["model"].iloc[0]) if plan else None,
                "rows": len(group),
                "errors": int(row["errors"]),
                "errors_by_kind": _error_kinds(group),
                "missing": missing,
                "missing_total": sum(missing.values()),
                **{c: row[c] for c in _COVERAGE_ACCURACY},
                "outdated": outdated,
                "complete": int(row["errors"]) == 0 and not any(missing.values()) and not outdated,
            }
        )
    records += _unstarted_models(frame, plan)
    return pd.DataFrame.from_records(records)


_COVERAGE_ACCURACY = (
    "correct", "unsure", "total", "strict_accuracy", "strict_lo", "strict_hi", "strict_high",
    "valid_accuracy", "valid_lo", "valid_hi", "valid_high",
)  # fmt: skip


def _unstarted_models(frame: pd.DataFrame, plan: RunPlan | None) -> list[dict[str, Any]]:
    """Coverage records of planned models that have no row at all."""
    if plan is None:
        return []
    seen = set(frame["model"])
    return [
        {"display": model, "planned": plan.total(model), "rows": 0, "errors": 0,
         "errors_by_kind": {}, "missing": dict(benchmarks),
         "missing_total": sum(benchmarks.values()), "correct": 0, "unsure": 0, "total": 0,
         "strict_accuracy": None, "strict_lo": None, "strict_hi": None, "strict_high": None,
         "valid_accuracy": None, "valid_lo": None, "valid_hi": None, "valid_high": None,
         "outdated": {}, "complete": False}
        for model, benchmarks in sorted(plan.planned.items())
        if model not in seen
    ]  # fmt: skip


def missing_rows(
    group: pd.DataFrame, expected: Mapping[str, int] | None, plan: RunPlan | None
) -> dict[str, int]:
    """One model's missing rows per benchmark: against its plan when the plan knows the
    model (rows are task x epoch), else distinct tasks against `expected`."""
    if plan is not None:
        present = group.drop_duplicates(["benchmark", "task_id", "epoch"])
        counts = present.groupby("benchmark").size().to_dict()
        missing = plan.missing(str(group["model"].iloc[0]), counts)
        if missing is not None:
            return {name: missing[name] for name in ordered_benchmarks(missing)}
    return _missing_tasks(group, expected)


def _missing_tasks(group: pd.DataFrame, expected: Mapping[str, int] | None) -> dict[str, int]:
    """Expected minus distinct task ids seen, per benchmark with a shortfall."""
    if not expected:
        return {}
    seen = group.groupby("benchmark")["task_id"].nunique().to_dict()
    shortfall = {name: n - int(seen.get(name, 0)) for name, n in expected.items()}
    return {name: shortfall[name] for name in ordered_benchmarks(shortfall) if shortfall[name] > 0}


def _error_kinds(group: pd.DataFrame) -> dict[str, int]:
    """Error rows counted by error kind, sorted by kind."""
    kinds = group.loc[group["status"] == "error", "error_kind"].fillna("unknown")
    return dict(sorted(kinds.value_counts().to_dict().items()))


# --------------------------------------------------------------------------- paired


def paired_table(frame: pd.DataFrame, *, n_resamples: int = 2000, seed: int = 0) -> pd.DataFrame:
    """McNemar and bootstrap comparison for every pair of models over the whole suite, with
    the comparison at both ends of the unsure band (`statistics.compare_verdicts`)."""
    import pandas as pd

    models = ordered_models(frame)
    by_model = {m: list(frame[frame["display"] == m].itertuples(index=False)) for m in models}
    records = []
    for a, b in itertools.combinations(models, 2):
        pairs = st.align_verdicts(by_model[a], by_model[b])
        result = st.compare_verdicts(pairs, n_resamples=n_resamples, seed=seed)
        records.append({"model_a": a, "model_b": b, **_paired_record(result)})
    return pd.DataFrame.from_records(records, columns=["model_a", "model_b", *_PAIRED_COLUMNS])


_PAIRED_COLUMNS = (
    "n", "both", "only_a", "only_b", "neither", "diff", "diff_lo", "diff_hi", "p",
    "unsure_a", "unsure_b", "diff_favour_a", "p_favour_a", "diff_favour_b", "p_favour_b",
    "could_reverse",
)  # fmt: skip


def _paired_record(result: st.PairedComparison) -> dict[str, Any]:
    """Flat columns of one paired comparison; the band's ends are None without unsure rows."""
    ends = {"a": result.favour_a, "b": result.favour_b}
    return {
        "n": result.n,
        "both": result.both,
        "only_a": result.only_a,
        "only_b": result.only_b,
        "neither": result.neither,
        "diff": result.diff,
        "diff_lo": result.diff_lo,
        "diff_hi": result.diff_hi,
        "p": result.p_value,
        "unsure_a": result.unsure_a,
        "unsure_b": result.unsure_b,
        **{f"diff_favour_{k}": end.diff if end else None for k, end in ends.items()},
        **{f"p_favour_{k}": end.p_value if end else None for k, end in ends.items()},
        "could_reverse": result.could_reverse,
    }


def verdict_sources(frame: pd.DataFrame) -> dict[str, dict[str, int]]:
    """Per model, the verdicts a person's review (`human`) and an LLM judge (`judge`) gave;
    the rules gave the rest. Models with neither are left out."""
    decided = frame[frame["source"].isin(["human", "judge"])]
    found: dict[str, dict[str, int]] = {}
    for (display, source), n in decided.groupby(["display", "source"]).size().items():
        found.setdefault(str(display), {"human": 0, "judge": 0})[str(source)] = int(n)
    return dict(sorted(found.items()))


# --------------------------------------------------------------------------- epochs


def epoch_count(frame: pd.DataFrame) -> int:
    """Number of distinct epochs in the rows (0 when there are no rows)."""
    return int(frame["epoch"].nunique())


def epoch_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Per model x benchmark across epochs: mean and std, pass@1, pass@K, majority, cluster CI.

    Error rows count as not correct here, like strict accuracy. K is the number of distinct
    epochs in the run; a task with fewer than K rows uses k = its row count for pass@K.
    """
    import pandas as pd

    k = epoch_count(frame)
    records = []
    for (display, benchmark), group in frame.groupby(["display", "benchmark"], sort=True):
        records.append({"display": display, "benchmark": benchmark, **_epoch_stats(group, k)})
    table = pd.DataFrame.from_records(records)
    if table.empty:
        return table
    ranks = _benchmark_rank(table["benchmark"])
    table = table.assign(_rank=table["benchmark"].map(ranks))
    return table.sort_values(["display", "_rank"]).drop(columns="_rank").reset_index(drop=True)


def _epoch_stats(group: pd.DataFrame, k: int) -> dict[str, Any]:
    """Epoch statistics of one model x benchmark group."""
    correct = group["status"] == "correct"
    per_epoch = correct.groupby(group["epoch"]).mean().tolist()
    mean, std = st.epoch_mean_std(per_epoch)
    per_task = correct.groupby(group["task_id"]).agg(["sum", "count"])
    counts, sizes = per_task["sum"].astype(int).tolist(), per_task["count"].astype(int).tolist()
    verdicts = correct.groupby(group["task_id"]).agg(lambda v: st.majority_vote(v.tolist()))
    cluster_mean, lo, hi = st.clustered_interval(counts, sizes)
    return {
        "epochs": len(per_epoch),
        "tasks": len(counts),
        "k": k,
        "mean": mean,
        "std": std,
        "pass_1": _mean(st.pass_at_k(n, c, 1) for c, n in zip(counts, sizes, strict=True)),
        "pass_k": _mean(st.pass_at_k(n, c, min(k, n)) for c, n in zip(counts, sizes, strict=True)),
        "majority": float(verdicts.mean()),
        "cluster_mean": cluster_mean,
        "cluster_lo": lo,
        "cluster_hi": hi,
    }


def _mean(values: Iterable[float]) -> float:
    """Arithmetic mean of a non-empty iterable."""
    items = list(values)
    return sum(items) / len(items)


# --------------------------------------------------------------------------- row lists


def failure_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """Incorrect rows (wrong answers only; error rows are listed apart), in report order."""
    return frame[frame["status"] == "incorrect"].reset_index(drop=True)


def error_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """Error rows, in report order."""
    return frame[frame["status"] == "error"].reset_index(drop=True)
