"""Per-provider adaptive concurrency: back off when a provider answers 429, recover slowly."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class AdaptiveLimiter:
    """An AIMD concurrency cap: halve on a rate-limit answer, +1 after a run of successes."""

    def __init__(self, ceiling: int, *, recover_after: int = 20) -> None:
        self.ceiling = ceiling
        self.limit = ceiling
        self._in_flight = 0
        self._successes = 0
        self._recover_after = recover_after
        self._condition = asyncio.Condition()

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one call slot for the duration of the block."""
        async with self._condition:
            await self._condition.wait_for(lambda: self._in_flight < self.limit)
            self._in_flight += 1
        try:
            yield
        finally:
            async with self._condition:
                self._in_flight -= 1
                self._condition.notify_all()

    def rate_limited(self) -> None:
        """The provider said slow down: halve the cap (never below one)."""
        self.limit = max(1, self.limit // 2)
        self._successes = 0

    def succeeded(self) -> None:
        """Grow back towards the ceiling after enough calls in a row went through."""
        self._successes += 1
        if self._successes >= self._recover_after and self.limit < self.ceiling:
            self.limit += 1
            self._successes = 0
