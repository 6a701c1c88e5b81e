"""Why a run stops before its plan is done: a signal, or a spending cap reached.

A stop is cooperative: the runner starts nothing new, cancels the tasks in flight (their rows
are simply missing, so `--resume` runs them again) and keeps every row already written.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass

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
    """Known costs of the calls that returned."""
    total_tokens: int = 0
    """Known token counts of the calls that returned."""
    unknown_cost_calls: int = 0
    """Calls that returned with no cost (no price, or usage the provider misreported)."""
    unknown_token_calls: int = 0
    """Calls that returned with no total token count."""
    calls_cancelled: int = 0
    """Calls cut off in flight (a signal, a task timeout): perhaps charged, never counted."""
    calls_in_flight_at_cap: int = 0
    """Calls in flight once the last call was sent, when a cap was reached: the most that
    can have been spent past the cap."""


class RunStopped(Exception):
    """Raised inside a task that was about to call a model after the run was told to stop."""
