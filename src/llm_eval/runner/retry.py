"""The one retry policy: which failures are retried, and how long to wait between attempts."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from llm_eval.errors import ProviderError

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with full jitter; a server's Retry-After wins, up to a cap."""

    max_attempts: int = 4
    base_s: float = 1.0
    max_s: float = 30.0
    retry_after_cap_s: float = 60.0

    def delay(self, attempt: int, error: ProviderError, rng: random.Random) -> float:
        """Seconds to wait after failed attempt number `attempt` (1-based)."""
        if error.retry_after_s is not None:
            return min(max(error.retry_after_s, 0.0), self.retry_after_cap_s)
        ceiling = min(self.max_s, self.base_s * 2 ** (attempt - 1))
        return rng.uniform(ceiling / 2, ceiling)


@dataclass
class AttemptLog:
    """How many attempts a call took (successful or not)."""

    attempts: int = 0


async def call_with_retries(
    call: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    log: AttemptLog,
    *,
    on_retry: Callable[[ProviderError], None] | None = None,
    rng: random.Random | None = None,
) -> T:
    """Run `call` until it succeeds, fails permanently, or attempts run out."""
    rng = rng or random.Random()
    while True:
        log.attempts += 1
        try:
            return await call()
        except ProviderError as error:
            if not error.transient or log.attempts >= policy.max_attempts:
                raise
            if on_retry is not None:
                on_retry(error)
            await asyncio.sleep(policy.delay(log.attempts, error, rng))
