"""The fifth held-back set (`tests/scoring/blind_round5.jsonl`): `blind_sets.py` measured on it.

uv run python -m tests.support.blind_round5     # every figure, by class, and the misses
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support import blind_sets
from tests.support.blind_sets import BLIND_SETS, LABELS, Goals, Measure

__all__ = ["BLIND_ROUND5", "BLIND_ROUND5_GOALS", "LABELS", "load_cases", "measure", "report"]

BLIND_ROUND5 = BLIND_SETS["blind_round5"]
BLIND_ROUND5_GOALS = Goals()


def load_cases(path: Path = BLIND_ROUND5) -> list[dict[str, Any]]:
    """The set's rows, in file order (the fifth set's unless `path` names another)."""
    return blind_sets.load_cases(path)


def measure(cases: list[dict[str, Any]] | None = None) -> Measure:
    """`blind_sets.measure` on `cases`, the fifth set's by default."""
    return blind_sets.measure(load_cases() if cases is None else cases)


def report(result: Measure) -> str:
    """`blind_sets.report` for a measure of the fifth set."""
    return blind_sets.report(result, load_cases())


if __name__ == "__main__":
    print(report(measure()))
