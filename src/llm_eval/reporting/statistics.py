"""Accuracy intervals, paired tests and epoch statistics, in pure Python.

Kept free of numpy/scipy on purpose: the numbers here are small (hundreds of rows), the
formulas are short, and the CLI must import this module without paying for a numeric stack.
Every estimator documents its formula so a reader can check a report by hand.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

Z_95 = 1.959964
"""Two-sided 95% normal quantile, used by every interval in this module."""

SIGNIFICANCE = 0.05
"""Two-sided level at which a paired test calls a difference resolved."""


class RowLike(Protocol):
    """What the pairing functions need from a row: `TraceRow` and pandas tuples both fit."""

    benchmark: str
    task_id: str
    epoch: int
    status: str


# --------------------------------------------------------------------------- accuracy


def wilson_interval(k: int, n: int, z: float = Z_95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion k/n.

    Better than the normal (Wald) interval at small n and near 0 or 1, which is where a
    108-task benchmark with a strong model lives. n == 0 carries no information: (0, 1).
    """
    if n <= 0:
        return (0.0, 1.0)
    if not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    p = k / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = (z / (1 + z2 / n)) * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    # At k = 0 or k = n the bound is exactly 0 or 1; pin it rather than trust the rounding.
    lo = 0.0 if k == 0 else max(0.0, centre - half)
    hi = 1.0 if k == n else min(1.0, centre + half)
    return (lo, hi)


@dataclass(frozen=True, slots=True)
class AccuracySummary:
    """Row counts of one group and its two accuracies, each with a Wilson interval.

    `valid_accuracy` ignores error rows (correct / (correct + incorrect)): what the model
    scores when it answers. `strict_accuracy` counts errors as wrong (correct / total): what
    a user of the run gets. Accuracies are None when their denominator is zero.

    Both count only sure-correct rows, so each is the low end of a band: the `unsure` rows
    (replies the rules could not settle) might all be wrong, giving the accuracy itself, or
    all right, giving `strict_high` / `valid_high`. The band is where the accuracy can move
    once someone settles them; the Wilson intervals stay around the sure accuracy.
    """

    correct: int
    incorrect: int
    errors: int
    total: int
    valid_accuracy: float | None
    valid_interval: tuple[float, float]
    strict_accuracy: float | None
    strict_interval: tuple[float, float]
    unsure: int = 0
    """Answered rows the rules could not settle: counted in both denominators, never right."""

    @property
    def valid(self) -> int:
        """Rows that produced a scored answer (correct, incorrect or unsure)."""
        return self.correct + self.incorrect + self.unsure

    @property
    def strict_high(self) -> float | None:
        """Strict accuracy if every unsure row were right: (correct + unsure) / total."""
        return (self.correct + self.unsure) / self.total if self.total else None

    @property
    def valid_high(self) -> float | None:
        """Valid-subset accuracy if every unsure row were right: (correct + unsure) / valid."""
        return (self.correct + self.unsure) / self.valid if self.valid else None


def accuracy_summary(
    correct: int, incorrect: int, errors: int = 0, *, unsure: int = 0, z: float = Z_95
) -> AccuracySummary:
    """Summarise counts of correct, incorrect, unsure and error rows into both accuracies."""
    valid = correct + incorrect + unsure
    total = valid + errors
    return AccuracySummary(
        unsure=unsure,
        correct=correct,
        incorrect=incorrect,
        errors=errors,
        total=total,
        valid_accuracy=correct / valid if valid else None,
        valid_interval=wilson_interval(correct, valid, z),
        strict_accuracy=correct / total if total else None,
        strict_interval=wilson_interval(correct, total, z),
    )


def summarize_statuses(statuses: Iterable[str], *, z: float = Z_95) -> AccuracySummary:
    """Count row statuses (`correct` | `incorrect` | `unsure` | `error`) and summarise them."""
    counts = {"correct": 0, "incorrect": 0, "unsure": 0, "error": 0}
    for status in statuses:
        if status not in counts:
            raise ValueError(f"unknown row status {status!r}")
        counts[status] += 1
    return accuracy_summary(
        counts["correct"], counts["incorrect"], counts["error"], unsure=counts["unsure"], z=z
    )


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (q in [0, 100]) by linear interpolation between order statistics.

    With the values sorted as x[0..n-1], the position is h = (n - 1) * q / 100 and the result
    is x[floor(h)] + (h - floor(h)) * (x[floor(h) + 1] - x[floor(h)]). This is numpy's
    default ("linear", Hyndman & Fan type 7), so p50 of [1, 2, 3, 4] is 2.5.
    """
    if not values:
        raise ValueError("percentile of an empty sequence")
    if not 0 <= q <= 100:
        raise ValueError(f"q must be in [0, 100], got {q}")
    ordered = sorted(values)
    h = (len(ordered) - 1) * q / 100
    low = math.floor(h)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (h - low) * (ordered[high] - ordered[low])


# --------------------------------------------------------------------------- paired tests


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts b and c.

    Under the null each discordant pair is a fair coin, so min(b, c) ~ Binomial(b + c, 1/2)
    and p = min(1, 2 * sum_{i <= min(b, c)} C(b + c, i) / 2^(b + c)). Integer arithmetic
    keeps it exact for any n. No discordant pairs (b = c = 0): no evidence, p = 1.
    """
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be >= 0, got b={b}, c={c}")
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1))
    return min(1.0, (2 * tail) / (1 << n))


def paired_bootstrap_diff(
    a: Sequence[bool],
    b: Sequence[bool],
    *,
    n_resamples: int = 2000,
    seed: int = 0,
    alpha: float = 0.05,
) -> tuple[float, float, float]:
    """Accuracy difference mean(a) - mean(b) with a paired percentile bootstrap interval.

    Tasks are resampled with replacement, keeping each task's pair together, so the interval
    reflects that both models saw the same (easy or hard) tasks. Seeded with
    `random.Random(seed)`: the same inputs give the same interval. Returns (diff, lo, hi).
    """
    if len(a) != len(b):
        raise ValueError(f"paired samples differ in length: {len(a)} vs {len(b)}")
    if not a:
        raise ValueError("paired bootstrap needs at least one pair")
    deltas = [int(x) - int(y) for x, y in zip(a, b, strict=True)]
    n = len(deltas)
    rng = random.Random(seed)
    resampled = [sum(rng.choices(deltas, k=n)) / n for _ in range(n_resamples)]
    lo = percentile(resampled, 100 * alpha / 2)
    hi = percentile(resampled, 100 * (1 - alpha / 2))
    return (sum(deltas) / n, lo, hi)


def align_pairs(rows_a: Iterable[RowLike], rows_b: Iterable[RowLike]) -> list[tuple[bool, bool]]:
    """Pair two models' verdicts on the same (benchmark, task_id, epoch), sorted by that key,
    as (A correct, B correct); an unsure row is not correct. See `align_verdicts`."""
    return [(a == "correct", b == "correct") for a, b in align_verdicts(rows_a, rows_b)]


def align_verdicts(rows_a: Iterable[RowLike], rows_b: Iterable[RowLike]) -> list[tuple[str, str]]:
    """Pair two models' row statuses on the same (benchmark, task_id, epoch), sorted by it.

    A pair where either row is an error is left out: an error is not a wrong answer, so
    counting it would test the infrastructure rather than the models. Keys present for only
    one model are left out too.
    """
    verdicts_a = _verdicts_by_key(rows_a)
    verdicts_b = _verdicts_by_key(rows_b)
    shared = sorted(verdicts_a.keys() & verdicts_b.keys())
    return [(verdicts_a[key], verdicts_b[key]) for key in shared]


def _verdicts_by_key(rows: Iterable[RowLike]) -> dict[tuple[str, str, int], str]:
    """Map each non-error row's (benchmark, task_id, epoch) to its status."""
    return {
        (row.benchmark, row.task_id, int(row.epoch)): str(row.status)
        for row in rows
        if row.status != "error"
    }


@dataclass(frozen=True, slots=True)
class PairedExtreme:
    """The paired test with the unsure rows settled one way: discordant counts, the
    accuracy difference A - B and McNemar's p."""

    only_a: int
    only_b: int
    diff: float
    p_value: float

    @property
    def outcome(self) -> tuple[int, bool]:
        """Who is ahead (+1 A, -1 B, 0 tied) and whether McNemar resolves it."""
        return _outcome(self.only_a, self.only_b, self.p_value)


@dataclass(frozen=True, slots=True)
class PairedComparison:
    """Paired outcome of models A and B on shared tasks: the 2x2 table and its tests.

    The table and tests read an unsure row as not correct, like the accuracies (the low end
    of each model's band). `favour_a` re-reads A's unsure rows as right and B's as wrong,
    `favour_b` the reverse: the two ends between which settling the unsure rows can move
    the comparison. Both are None when no paired row is unsure.
    """

    n: int
    both: int
    only_a: int
    only_b: int
    neither: int
    diff: float | None
    diff_lo: float | None
    diff_hi: float | None
    p_value: float
    unsure_a: int = 0
    """Paired rows where A's verdict is unsure."""
    unsure_b: int = 0
    """Paired rows where B's verdict is unsure."""
    favour_a: PairedExtreme | None = None
    favour_b: PairedExtreme | None = None

    @property
    def could_reverse(self) -> bool:
        """Whether settling the unsure rows could change who is ahead or whether the test
        resolves the gap: either end of the band has another outcome than the table."""
        here = _outcome(self.only_a, self.only_b, self.p_value)
        ends = (self.favour_a, self.favour_b)
        return any(end is not None and end.outcome != here for end in ends)


def _outcome(only_a: int, only_b: int, p_value: float) -> tuple[int, bool]:
    """(sign of A - B, resolved at `SIGNIFICANCE`) of a paired table."""
    sign = (only_a > only_b) - (only_a < only_b)
    return sign, p_value < SIGNIFICANCE


def compare_paired(
    pairs: Sequence[tuple[bool, bool]], *, n_resamples: int = 2000, seed: int = 0
) -> PairedComparison:
    """Tabulate aligned verdict pairs and run McNemar and the paired bootstrap on them."""
    both = sum(1 for x, y in pairs if x and y)
    only_a = sum(1 for x, y in pairs if x and not y)
    only_b = sum(1 for x, y in pairs if y and not x)
    diff = lo = hi = None
    if pairs:
        a, b = [x for x, _ in pairs], [y for _, y in pairs]
        diff, lo, hi = paired_bootstrap_diff(a, b, n_resamples=n_resamples, seed=seed)
    return PairedComparison(
        n=len(pairs),
        both=both,
        only_a=only_a,
        only_b=only_b,
        neither=len(pairs) - both - only_a - only_b,
        diff=diff,
        diff_lo=lo,
        diff_hi=hi,
        p_value=mcnemar_exact(only_a, only_b),
    )


def compare_verdicts(
    pairs: Sequence[tuple[str, str]], *, n_resamples: int = 2000, seed: int = 0
) -> PairedComparison:
    """`compare_paired` on aligned status pairs (unsure read as not correct), with the two
    ends of the unsure band when any paired row is unsure.

    At each end only the discordant counts move, so the end's McNemar p and difference are
    exact; no bootstrap is drawn for them.
    """
    main = compare_paired(
        [(a == "correct", b == "correct") for a, b in pairs], n_resamples=n_resamples, seed=seed
    )
    unsure_a = sum(a == "unsure" for a, _ in pairs)
    unsure_b = sum(b == "unsure" for _, b in pairs)
    if not unsure_a and not unsure_b:
        return main
    return replace(
        main,
        unsure_a=unsure_a,
        unsure_b=unsure_b,
        favour_a=_extreme(pairs, favour_a=True),
        favour_b=_extreme(pairs, favour_a=False),
    )


def _extreme(pairs: Sequence[tuple[str, str]], *, favour_a: bool) -> PairedExtreme:
    """The paired table with the favoured model's unsure rows right and the other's wrong."""
    settled = [
        (a == "correct" or (favour_a and a == "unsure"),
         b == "correct" or (not favour_a and b == "unsure"))
        for a, b in pairs
    ]  # fmt: skip
    only_a = sum(1 for x, y in settled if x and not y)
    only_b = sum(1 for x, y in settled if y and not x)
    return PairedExtreme(
        only_a=only_a,
        only_b=only_b,
        diff=(only_a - only_b) / len(pairs),
        p_value=mcnemar_exact(only_a, only_b),
    )


# --------------------------------------------------------------------------- epochs


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k: chance that at least one of k draws from n attempts is correct.

    pass@k = 1 - C(n - c, k) / C(n, k) (Chen et al., 2021), computed as the product
    1 - prod_{i = n - c + 1}^{n} (1 - k / i), which never forms the huge binomials.
    """
    if not 0 <= c <= n:
        raise ValueError(f"need 0 <= c <= n, got c={c}, n={n}")
    if not 1 <= k <= n:
        raise ValueError(f"need 1 <= k <= n, got k={k}, n={n}")
    if n - c < k:
        return 1.0
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))


def majority_vote(verdicts: Sequence[bool]) -> bool:
    """True when strictly more than half of a task's epochs were correct.

    Ties (and an empty sequence) are False: a task only counts as solved when the model
    gets it right more often than not, the conservative reading for a small K.
    """
    return sum(bool(v) for v in verdicts) * 2 > len(verdicts)


def epoch_mean_std(per_epoch_accuracies: Sequence[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (n - 1 denominator) of per-epoch accuracies.

    One epoch has no spread to estimate: its std is reported as 0.0.
    """
    if not per_epoch_accuracies:
        raise ValueError("need at least one epoch")
    n = len(per_epoch_accuracies)
    mean = sum(per_epoch_accuracies) / n
    if n == 1:
        return (mean, 0.0)
    var = sum((x - mean) ** 2 for x in per_epoch_accuracies) / (n - 1)
    return (mean, math.sqrt(var))


def clustered_interval(
    per_task_correct_counts: Sequence[int], per_task_n: Sequence[int], *, z: float = Z_95
) -> tuple[float, float, float]:
    """Mean accuracy with a 95% interval that treats a task's epochs as one cluster.

    Repeated epochs of one task are not independent draws, so a Wilson interval over all
    task-epoch rows is too narrow. With T tasks, per-task means p_t = c_t / n_t and
    m = (1/T) * sum p_t, the cluster-robust standard error (equal cluster weights, small-sample
    factor T / (T - 1)) is SE = sqrt(sum_t (p_t - m)^2 / (T * (T - 1))); the interval is
    m +/- z * SE (normal approximation), clipped to [0, 1]. Returns (m, lo, hi); fewer than
    two tasks give no variance estimate, so the interval is the uninformative [0, 1].
    """
    if len(per_task_correct_counts) != len(per_task_n):
        raise ValueError("per-task counts and sizes differ in length")
    means = [c / n for c, n in zip(per_task_correct_counts, per_task_n, strict=True) if n > 0]
    if not means:
        return (0.0, 0.0, 1.0)
    t = len(means)
    mean = sum(means) / t
    if t < 2:
        return (mean, 0.0, 1.0)
    se = math.sqrt(sum((p - mean) ** 2 for p in means) / (t * (t - 1)))
    return (mean, max(0.0, mean - z * se), min(1.0, mean + z * se))


# --------------------------------------------------------------------------- power

Z_80_POWER = 0.841621


def minimum_detectable_difference(
    n: int, accuracy: float, *, z_alpha: float = Z_95, z_power: float = Z_80_POWER
) -> float | None:
    """The smallest accuracy difference a paired test on `n` tasks detects at 80% power.

    Two models are placed symmetrically around `accuracy` (the observed mean), `d` apart,
    and the normal approximation to McNemar's test (Connor, 1987) decides: with discordant
    share psi, `d` is detected when n d^2 >= (z_a sqrt(psi) + z_b sqrt(psi - d^2))^2. Without
    the pairs' real discordance the models' errors are taken as independent, psi = p_a (1 -
    p_b) + p_b (1 - p_a). Returns None when not even a difference of 100 pp is detectable.
    """
    if n <= 0:
        return None

    def detectable(d: float) -> bool:
        p_a = min(1.0, max(accuracy + d / 2, d))
        p_b = p_a - d
        psi = p_a * (1 - p_b) + p_b * (1 - p_a)
        needed = (z_alpha * math.sqrt(psi) + z_power * math.sqrt(max(psi - d * d, 0.0))) ** 2
        return n * d * d >= needed

    if not detectable(1.0):
        return None
    low, high = 0.0, 1.0
    for _ in range(60):
        middle = (low + high) / 2
        low, high = (low, middle) if detectable(middle) else (middle, high)
    return high
