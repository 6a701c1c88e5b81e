"""The ramp-up of a run's first wave of tasks: a token bucket of starts per second.

Tasks started together finish together, and their replies then queue behind one another on
the event loop, round after round; a burst of starts is also a thundering herd for the
provider. So the first wave (the first `global_limit` starts; later starts follow completions)
takes tokens from a bucket that holds `burst` tokens and refills at `rate` per second. A fixed
gap between starts did the same but grew with the wave: 15 ms spread 1,024 starts over 15 s;
at 1,000 starts per second they spread over one second, and 64 over 48 ms.
"""

from __future__ import annotations

import asyncio
import time


class StartBucket:
    """Admits the first `wave` starts at most `rate` per second after a burst of `burst`.

    A token bucket kept as one number (the generic cell rate algorithm): `_due` is when the
    bucket would be empty if every start so far had taken its token on time. A start waits
    until `_due` less the time `burst - 1` tokens take to refill.
    """

    def __init__(self, rate: float, burst: int, wave: int) -> None:
        self._left = wave if rate > 0 else 0
        self._interval = 1 / rate if rate > 0 else 0.0
        self._tolerance = (max(1, burst) - 1) * self._interval
        self._due = 0.0

    async def start(self) -> None:
        """Wait for this start's token (no wait once the first wave has started)."""
        if self._left <= 0:
            return
        self._left -= 1
        now = time.monotonic()
        due = max(self._due, now)
        self._due = due + self._interval
        wait = due - self._tolerance - now
        if wait > 1e-9:  # float sums of the interval, not a wait
            await asyncio.sleep(wait)
