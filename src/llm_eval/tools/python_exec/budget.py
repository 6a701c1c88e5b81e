"""One memory budget for all `python_exec` calls of the process at once.

Each call reserves its whole `memory_mb` before its sandbox starts and returns it when the
sandbox is gone, so the sandboxes together never hold more than the budget, however many
tool calls are in flight. Reservations are served in arrival order: a large call is not
passed over forever by small ones.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass


def default_memory_budget_mb() -> int:
    """Half of this machine's physical memory, in MB: the sandboxes' budget by default."""
    return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // (2 * 1024 * 1024)


@dataclass(slots=True)
class _Waiter:
    mb: int
    granted: asyncio.Future[None]


class MemoryBudget:
    """A weighted semaphore counted in MB, first come first served."""

    def __init__(self, total_mb: int) -> None:
        self.total_mb = total_mb
        self.in_use_mb = 0
        self.waited_calls = 0  # calls that could not start at once, since the process began
        self.waited_s = 0.0
        self._queue: deque[_Waiter] = deque()

    @contextlib.asynccontextmanager
    async def reserve(self, mb: int) -> AsyncIterator[float]:
        """Hold `mb` for the duration; yields the seconds spent waiting for them."""
        if mb > self.total_mb:
            raise ValueError(
                f"a call's memory_mb ({mb} MB) exceeds memory_budget_mb ({self.total_mb} MB): "
                "it could never start"
            )
        waited = await self._acquire(mb)
        try:
            yield waited
        finally:
            self._release(mb)

    def resize(self, total_mb: int) -> None:
        """A new total for reservations still to come; held ones stay held."""
        self.total_mb = total_mb
        self._grant_waiting()

    async def _acquire(self, mb: int) -> float:
        if not self._queue and self.in_use_mb + mb <= self.total_mb:
            self.in_use_mb += mb
            return 0.0
        started = time.monotonic()
        waiter = _Waiter(mb, asyncio.get_running_loop().create_future())
        self._queue.append(waiter)
        try:
            await waiter.granted
        except asyncio.CancelledError:
            if waiter.granted.done() and not waiter.granted.cancelled():
                self._release(mb)  # granted in the same instant as cancelled
            else:
                self._queue.remove(waiter)
                self._grant_waiting()
            raise
        waited = time.monotonic() - started
        self.waited_calls += 1
        self.waited_s += waited
        return waited

    def _release(self, mb: int) -> None:
        self.in_use_mb -= mb
        self._grant_waiting()

    def _grant_waiting(self) -> None:
        while self._queue and self.in_use_mb + self._queue[0].mb <= self.total_mb:
            waiter = self._queue.popleft()
            self.in_use_mb += waiter.mb
            waiter.granted.set_result(None)


_SHARED: MemoryBudget | None = None


def shared_budget(total_mb: int | None = None) -> MemoryBudget:
    """The process's one budget, of `total_mb` (None: half of this machine's memory)."""
    global _SHARED
    total = total_mb if total_mb is not None else default_memory_budget_mb()
    if _SHARED is None:
        _SHARED = MemoryBudget(total)
    elif _SHARED.total_mb != total:
        _SHARED.resize(total)
    return _SHARED
