"""AdaptiveLimiter: halve on a rate limit, grow back after a run of successes, never exceed."""

from __future__ import annotations

import asyncio

from llm_eval.runner.ratelimit import AdaptiveLimiter


def test_halves_on_rate_limit_and_recovers_one_step_at_a_time() -> None:
    limiter = AdaptiveLimiter(8, recover_after=3)
    limiter.rate_limited()
    limiter.rate_limited()
    assert limiter.limit == 2
    for _ in range(3):
        limiter.succeeded()
    assert limiter.limit == 3
    for _ in range(100):
        limiter.succeeded()
    assert limiter.limit == 8  # never above the ceiling


def test_never_below_one() -> None:
    limiter = AdaptiveLimiter(2)
    for _ in range(5):
        limiter.rate_limited()
    assert limiter.limit == 1


def test_slots_respect_the_current_limit() -> None:
    limiter = AdaptiveLimiter(6)
    limiter.rate_limited()  # 3
    peak = 0
    active = 0

    async def work() -> None:
        nonlocal peak, active
        async with limiter.slot():
            active += 1
            peak = max(peak, active)
            await asyncio.sleep(0.01)
            active -= 1

    async def main() -> None:
        await asyncio.gather(*(work() for _ in range(20)))

    asyncio.run(main())
    assert peak == 3
