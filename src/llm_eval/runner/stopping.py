"""Why a run stops before its plan is done: a signal, or a spending cap reached.

A stop is cooperative: the runner starts nothing new, cancels the tasks in flight (their rows
are simply missing, so `--resume` runs them again) and keeps every row already written.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass

from llm_eval.schemas import Usage

BUDGET_EXIT_CODE = 4
"""Exit code of a run stopped by `--max-cost` or `--max-total-tokens`."""


@dataclass(frozen=True)
class StopReason:
    """Why a run stopped early: `kind` is `signal` or `budget`; `detail` says which one."""

    kind: str
    detail: str
    exit_code: int

    @classmethod
    def from_signal(cls, signum: int) -> StopReason:
        """SIGINT exits 130 and SIGTERM 143, as a shell reports a process they ended."""
        return cls("signal", signal.Signals(signum).name, 128 + signum)

    @classmethod
    def budget(cls, detail: str) -> StopReason:
        return cls("budget", detail, BUDGET_EXIT_CODE)


@dataclass
class Spend:
    """What this run's model calls used (answers replayed from the cache cost nothing)."""

    cost_usd: float = 0.0
    total_tokens: int = 0


@dataclass(frozen=True)
class Budget:
    """Caps on one run's spend; None means no cap."""

    max_cost_usd: float | None = None
    max_total_tokens: int | None = None

    def charge(self, spend: Spend, usage: Usage, *, simulated: bool, model: str) -> str | None:
        """Add one call's usage to `spend`; return why the run must stop, or None.

        A real model's call of unknown cost stops a cost-capped run: its spend could not be
        capped. Simulated models cost nothing.
        """
        spend.total_tokens += usage.total_tokens or 0
        if usage.cost_usd is not None:
            spend.cost_usd += usage.cost_usd
        elif self.max_cost_usd is not None and not simulated:
            return (
                f"--max-cost: the cost of model {model!r} is unknown (give it "
                "input_cost_per_mtok / output_cost_per_mtok), so the spend cannot be capped"
            )
        if self.max_cost_usd is not None and spend.cost_usd >= self.max_cost_usd:
            return f"cost ${spend.cost_usd:.4f} reached --max-cost ${self.max_cost_usd:g}"
        if self.max_total_tokens is not None and spend.total_tokens >= self.max_total_tokens:
            return (
                f"{spend.total_tokens:,} tokens reached --max-total-tokens "
                f"{self.max_total_tokens:,}"
            )
        return None


class RunStopped(Exception):
    """Raised inside a task that was about to call a model after the run was told to stop."""
