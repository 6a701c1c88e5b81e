"""Statistics against values computed by hand."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest

from llm_eval.reporting.statistics import (
    accuracy_summary,
    align_pairs,
    align_verdicts,
    clustered_interval,
    compare_paired,
    compare_verdicts,
    epoch_mean_std,
    majority_vote,
    mcnemar_exact,
    paired_bootstrap_diff,
    pass_at_k,
    percentile,
    summarize_statuses,
    wilson_interval,
)


def test_wilson_102_of_108() -> None:
    # p = 102/108 = 0.944444, z = 1.959964, z^2 = 3.841459, n = 108
    # centre = (p + z^2 / 2n) / (1 + z^2 / n) = (0.944444 + 0.017785) / 1.035569 = 0.929179
    # half   = z / (1 + z^2/n) * sqrt(p(1-p)/n + z^2/4n^2)
    #        = 1.892635 * sqrt(0.00048583 + 0.00008234) = 1.892635 * 0.023836 = 0.045113
    # -> [0.884066, 0.974292]
    lo, hi = wilson_interval(102, 108)
    assert lo == pytest.approx(0.884066, abs=1e-5)
    assert hi == pytest.approx(0.974292, abs=1e-5)


def test_wilson_edges() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)
    lo, hi = wilson_interval(0, 10)
    assert lo == 0.0 and 0 < hi < 0.35
    lo, hi = wilson_interval(10, 10)
    assert hi == 1.0 and 0.65 < lo < 1
    with pytest.raises(ValueError):
        wilson_interval(11, 10)


def test_accuracy_summary_valid_and_strict() -> None:
    summary = accuracy_summary(8, 1, 1)
    assert (summary.correct, summary.incorrect, summary.errors, summary.total) == (8, 1, 1, 10)
    assert summary.valid == 9
    assert summary.valid_accuracy == pytest.approx(8 / 9)
    assert summary.strict_accuracy == pytest.approx(0.8)
    assert summary.valid_interval == wilson_interval(8, 9)
    assert summary.strict_interval == wilson_interval(8, 10)
    empty = accuracy_summary(0, 0, 2)
    assert empty.valid_accuracy is None and empty.strict_accuracy == 0.0


def test_the_band_runs_from_all_unsure_wrong_to_all_unsure_right() -> None:
    # 6 correct, 2 incorrect, 2 unsure, 1 error: 11 rows, 10 answered
    summary = summarize_statuses(["correct"] * 6 + ["incorrect"] * 2 + ["unsure"] * 2 + ["error"])
    assert (summary.correct, summary.unsure, summary.total, summary.valid) == (6, 2, 11, 10)
    assert summary.strict_accuracy == pytest.approx(6 / 11)
    assert summary.strict_high == pytest.approx(8 / 11)
    assert summary.valid_accuracy == pytest.approx(6 / 10)
    assert summary.valid_high == pytest.approx(8 / 10)
    # the intervals stay around the sure accuracy
    assert summary.strict_interval == wilson_interval(6, 11)
    sure = accuracy_summary(3, 1)
    assert sure.strict_high == sure.strict_accuracy and sure.valid_high == sure.valid_accuracy
    nothing = accuracy_summary(0, 0, 2)
    assert nothing.valid_high is None and nothing.strict_high == 0.0
    assert accuracy_summary(0, 0).strict_high is None


def test_summarize_statuses() -> None:
    summary = summarize_statuses(["correct", "error", "incorrect", "correct"])
    assert (summary.correct, summary.incorrect, summary.errors) == (2, 1, 1)
    with pytest.raises(ValueError):
        summarize_statuses(["wrong"])


def test_percentile_linear_interpolation() -> None:
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile([4, 1, 3, 2], 0) == 1
    assert percentile([1, 2, 3, 4], 100) == 4
    # h = 9 * 0.95 = 8.55 -> 9 + 0.55 * (10 - 9)
    assert percentile(list(range(1, 11)), 95) == pytest.approx(9.55)
    assert percentile([7.0], 95) == 7.0
    with pytest.raises(ValueError):
        percentile([], 50)


def test_mcnemar_exact() -> None:
    # 2 * (C(10,0) + C(10,1)) / 2^10 = 2 * 11 / 1024
    assert mcnemar_exact(1, 9) == pytest.approx(0.021484375, abs=1e-12)
    assert mcnemar_exact(9, 1) == mcnemar_exact(1, 9)
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(5, 5) == 1.0  # capped at 1
    assert mcnemar_exact(0, 3) == pytest.approx(0.25)


def test_paired_bootstrap_deterministic_and_covers_diff() -> None:
    a = [True] * 30 + [False] * 10
    b = [True] * 22 + [False] * 18
    first = paired_bootstrap_diff(a, b, seed=7)
    assert first == paired_bootstrap_diff(a, b, seed=7)
    assert first != paired_bootstrap_diff(a, b, seed=8)
    diff, lo, hi = first
    assert diff == pytest.approx(0.2)
    assert lo <= diff <= hi
    assert lo > 0  # 8 one-sided discordant pairs out of 40


def test_paired_bootstrap_rejects_bad_input() -> None:
    with pytest.raises(ValueError):
        paired_bootstrap_diff([True], [True, False])
    with pytest.raises(ValueError):
        paired_bootstrap_diff([], [])


@dataclass
class _Row:
    benchmark: str
    task_id: str
    epoch: int
    status: str


def test_align_pairs_drops_errors_and_unmatched() -> None:
    a = [_Row("b", "t1", 0, "correct"), _Row("b", "t2", 0, "error"), _Row("b", "t3", 0, "correct")]
    b = [
        _Row("b", "t3", 0, "incorrect"),
        _Row("b", "t2", 0, "correct"),
        _Row("b", "t1", 0, "correct"),
        _Row("b", "t4", 0, "correct"),
    ]
    assert align_pairs(a, b) == [(True, True), (True, False)]


def test_compare_paired_table() -> None:
    pairs = [(True, True)] * 5 + [(True, False)] * 9 + [(False, True)] + [(False, False)] * 2
    result = compare_paired(pairs)
    assert (result.n, result.both, result.only_a, result.only_b, result.neither) == (17, 5, 9, 1, 2)
    assert result.p_value == pytest.approx(0.021484375)
    assert result.diff == pytest.approx(8 / 17)
    empty = compare_paired([])
    assert empty.n == 0 and empty.diff is None and empty.p_value == 1.0


def test_align_verdicts_keeps_unsure_apart_and_align_pairs_reads_it_as_not_correct() -> None:
    a = [_Row("b", "t1", 0, "unsure"), _Row("b", "t2", 0, "correct"), _Row("b", "t3", 0, "error")]
    b = [_Row("b", "t1", 0, "correct"), _Row("b", "t2", 0, "unsure"), _Row("b", "t3", 0, "unsure")]
    assert align_verdicts(a, b) == [("unsure", "correct"), ("correct", "unsure")]
    assert align_pairs(a, b) == [(False, True), (True, False)]


def test_unsure_rows_that_could_reverse_a_resolved_comparison() -> None:
    # A ahead 10 to 0 on sure verdicts (p = 2/1024): resolved. B has 10 unsure rows where A
    # was right: if B's unsure rows are all right, the gap closes to 10 to 10.
    pairs = [("correct", "correct")] * 20 + [("correct", "incorrect")] * 10
    pairs += [("correct", "unsure")] * 10 + [("incorrect", "incorrect")] * 5
    result = compare_verdicts(pairs)
    plain = compare_paired([(a == "correct", b == "correct") for a, b in pairs])
    # the table and test read unsure as not correct, like the accuracies
    assert (result.only_a, result.only_b, result.p_value) == (20, 0, plain.p_value)
    assert result.diff == plain.diff and result.diff_lo == plain.diff_lo
    assert (result.unsure_a, result.unsure_b) == (0, 10)
    assert result.favour_a is not None and result.favour_b is not None
    assert (result.favour_a.only_a, result.favour_a.only_b) == (20, 0)
    assert (result.favour_b.only_a, result.favour_b.only_b) == (10, 0)
    assert result.favour_b.p_value == pytest.approx(mcnemar_exact(10, 0))
    assert result.favour_b.diff == pytest.approx(10 / 45)
    assert not result.could_reverse  # still A ahead and resolved at both ends
    closer = [*pairs[:20], *pairs[25:]]  # 5 sure wins for A, 10 unsure B rows
    flipped = compare_verdicts(closer)
    assert flipped.p_value < 0.05
    assert flipped.favour_b is not None and flipped.favour_b.p_value >= 0.05
    assert flipped.could_reverse


def test_unsure_rows_that_could_flip_who_is_ahead_or_cannot_matter() -> None:
    # A ahead 3 to 2, not resolved; A's 2 unsure rows could not help B, but B's 2 could put
    # B ahead: the sign changes, so the unsure rows could reverse the order.
    pairs = [("correct", "incorrect")] * 3 + [("incorrect", "correct")] * 2
    pairs += [("correct", "unsure")] * 2 + [("unsure", "correct")] * 2
    result = compare_verdicts(pairs)
    assert (result.only_a, result.only_b) == (5, 4)
    assert result.favour_b is not None and result.favour_b.outcome == (-1, False)
    assert result.could_reverse
    sure = compare_verdicts([("correct", "incorrect"), ("incorrect", "incorrect")])
    assert sure.favour_a is None and sure.favour_b is None and not sure.could_reverse
    assert sure.unsure_a == sure.unsure_b == 0


def test_pass_at_k() -> None:
    # 1 - C(3,2)/C(5,2) = 1 - 3/10
    assert pass_at_k(5, 2, 2) == pytest.approx(0.7)
    assert pass_at_k(5, 0, 3) == 0.0
    assert pass_at_k(5, 4, 2) == 1.0  # n - c = 1 < k
    assert pass_at_k(5, 2, 1) == pytest.approx(0.4)  # pass@1 = c / n
    assert pass_at_k(200, 13, 10) == pytest.approx(1 - math.comb(187, 10) / math.comb(200, 10))
    with pytest.raises(ValueError):
        pass_at_k(3, 4, 1)
    with pytest.raises(ValueError):
        pass_at_k(3, 1, 4)


def test_majority_vote() -> None:
    assert majority_vote([True, True, False]) is True
    assert majority_vote([True, False]) is False  # tie
    assert majority_vote([True, True, False, False]) is False  # tie
    assert majority_vote([]) is False


def test_epoch_mean_std() -> None:
    mean, std = epoch_mean_std([0.8, 0.9, 1.0])
    assert mean == pytest.approx(0.9)
    assert std == pytest.approx(0.1)  # sqrt((0.01 + 0 + 0.01) / 2)
    assert epoch_mean_std([0.5]) == (0.5, 0.0)


def test_clustered_interval_by_hand() -> None:
    # tasks solved 3/3, 1/3, 2/3: p = [1, 1/3, 2/3], m = 2/3
    # sum (p - m)^2 = 1/9 + 1/9 + 0 = 2/9; SE = sqrt((2/9) / (3 * 2)) = sqrt(1/27) = 0.192450
    # m -/+ 1.959964 * 0.192450 = 0.666667 -/+ 0.377195 -> [0.289471, 1.043862] -> hi clipped to 1
    mean, lo, hi = clustered_interval([3, 1, 2], [3, 3, 3])
    assert mean == pytest.approx(2 / 3)
    assert lo == pytest.approx(0.289471, abs=1e-6)
    assert hi == 1.0


def test_clustered_interval_edges() -> None:
    assert clustered_interval([], []) == (0.0, 0.0, 1.0)
    assert clustered_interval([2], [3]) == (pytest.approx(2 / 3), 0.0, 1.0)
    mean, lo, hi = clustered_interval([2, 2], [4, 4])  # no spread between tasks
    assert (mean, lo, hi) == (0.5, 0.5, 0.5)


def test_minimum_detectable_difference_solves_the_power_equation() -> None:
    from llm_eval.reporting.statistics import Z_80_POWER, Z_95, minimum_detectable_difference

    d = minimum_detectable_difference(108, 0.5)
    assert d is not None
    p_a, p_b = 0.5 + d / 2, 0.5 - d / 2
    psi = p_a * (1 - p_b) + p_b * (1 - p_a)
    needed = (Z_95 * psi**0.5 + Z_80_POWER * (psi - d * d) ** 0.5) ** 2
    assert 108 * d * d == pytest.approx(needed, rel=1e-6)
    assert 0.18 < d < 0.20


def test_more_tasks_resolve_smaller_differences() -> None:
    from llm_eval.reporting.statistics import minimum_detectable_difference

    values = [minimum_detectable_difference(n, 0.9) for n in (10, 30, 108, 1000)]
    assert all(v is not None for v in values)
    assert values == sorted(values, reverse=True)  # type: ignore[type-var]
    assert minimum_detectable_difference(2, 0.5) is None
