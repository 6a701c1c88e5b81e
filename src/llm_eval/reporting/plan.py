"""What the runs behind a report planned, and which of them stopped early, from their run
records: the report counts missing rows against the plan, not against the rows it was given."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class StopNote:
    """A run that stopped before its plan was done."""

    results: str
    """The results file the run wrote."""
    kind: str
    """`signal`, `budget`, or `overshoot` (a complete run whose last calls passed a cap)."""
    detail: str
    """The signal's name, or which cap was reached and how."""
    at: str
    resume_command: str | None = None

    def reason(self) -> str:
        """`stopped by SIGTERM`, `stopped at the budget (…)`, or, for a run that finished its
        plan with its last calls past a cap, `passed its cap (…)`."""
        if self.kind == "signal":
            return f"stopped by {self.detail}"
        if self.kind == "overshoot":
            return f"finished its plan but passed its cap ({self.detail})"
        return f"stopped at the budget ({self.detail})"


@dataclass(frozen=True)
class RunPlan:
    """Rows planned per model id and benchmark, and the runs that stopped early."""

    planned: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    stops: Sequence[StopNote] = ()
    outdated: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    """Rows per model left out of every figure, by why: `gone` (the task left its file) or
    `stale` (its question changed since); see `reporting.task_check`."""

    def missing(self, model: str, present: Mapping[str, int]) -> dict[str, int] | None:
        """Planned minus present rows per benchmark with a shortfall; None if unplanned."""
        if model not in self.planned:
            return None
        shortfall = {b: n - present.get(b, 0) for b, n in self.planned[model].items()}
        return {b: n for b, n in shortfall.items() if n > 0}

    def total(self, model: str) -> int:
        return sum(self.planned.get(model, {}).values())


def outdated_text(counts: Mapping[str, int]) -> str:
    """`2 rows of tasks no longer in their task files, 1 row answers a changed question`."""
    parts = []
    if counts.get("gone"):
        n = counts["gone"]
        parts.append(f"{n} {'row' if n == 1 else 'rows'} of tasks no longer in their task files")
    if counts.get("stale"):
        n = counts["stale"]
        parts.append(f"{n} {'row answers' if n == 1 else 'rows answer'} a changed question")
    return ", ".join(parts)
