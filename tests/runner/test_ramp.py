"""The first wave's ramp-up is a token bucket: a burst, then a pace, then nothing; and a run
raises its own limit on open files for the tasks it keeps in flight."""

from __future__ import annotations

import asyncio
import resource
from itertools import pairwise

import pytest

from llm_eval.errors import UsageError
from llm_eval.runner import open_files, ramp
from llm_eval.runner.open_files import ensure_open_files, wanted_open_files
from llm_eval.runner.ramp import StartBucket


class FrozenClock:
    """`time.monotonic` that stands still, and `asyncio.sleep` that only records its waits."""

    def __init__(self) -> None:
        self.now = 100.0
        self.waits: list[float] = []

    def monotonic(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)


@pytest.fixture()
def clock(monkeypatch: pytest.MonkeyPatch) -> FrozenClock:
    frozen = FrozenClock()
    monkeypatch.setattr(ramp.time, "monotonic", frozen.monotonic)
    monkeypatch.setattr(ramp.asyncio, "sleep", frozen.sleep)
    return frozen


def starts(bucket: StartBucket, count: int) -> None:
    async def all_of_them() -> None:
        for _ in range(count):
            await bucket.start()

    asyncio.run(all_of_them())


def test_a_burst_passes_at_once_then_starts_are_paced_then_the_wave_is_over(
    clock: FrozenClock,
) -> None:
    starts(StartBucket(rate=1000, burst=16, wave=1024), 1100)
    # 16 at once, the other 1,008 of the wave 1 ms apart, the 76 after the wave unpaced.
    assert len(clock.waits) == 1024 - 16
    assert clock.waits[0] == pytest.approx(0.001) and clock.waits[-1] == pytest.approx(1.008)
    assert all(b - a == pytest.approx(0.001) for a, b in pairwise(clock.waits))


def test_the_wave_of_a_thousand_spreads_over_about_a_second_not_fifteen(
    clock: FrozenClock,
) -> None:
    starts(StartBucket(rate=1000, burst=16, wave=1024), 1024)
    assert max(clock.waits) < 1.1  # a fixed 15 ms gap took 15.3 s


def test_time_that_passed_refills_the_bucket(clock: FrozenClock) -> None:
    bucket = StartBucket(rate=10, burst=2, wave=100)
    starts(bucket, 2)
    clock.now += 0.2  # two tokens' worth
    starts(bucket, 2)
    assert clock.waits == []
    starts(bucket, 1)
    assert clock.waits == [pytest.approx(0.1)]


def test_a_rate_of_zero_turns_the_ramp_off(clock: FrozenClock) -> None:
    starts(StartBucket(rate=0, burst=1, wave=1024), 1024)
    assert clock.waits == []


def test_the_open_file_limit_is_raised_to_what_the_run_needs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    limits = {"soft": 1024, "hard": 524288}
    monkeypatch.setattr(
        open_files.resource, "getrlimit", lambda _which: (limits["soft"], limits["hard"])
    )
    monkeypatch.setattr(
        open_files.resource, "setrlimit", lambda _which, pair: limits.update(soft=pair[0])
    )
    assert ensure_open_files(16) == 1024  # enough already: untouched
    assert ensure_open_files(1500) == wanted_open_files(1500) == limits["soft"] == 3256
    limits.update(soft=1024, hard=1800)
    assert ensure_open_files(1500) == 1800  # as far as the hard limit goes
    limits.update(soft=1024, hard=1024)
    with pytest.raises(UsageError, match=r"runner\.global_limit: 2000 tasks .* at most 1024"):
        ensure_open_files(2000)


def test_the_real_limit_is_raised_in_this_process() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 3000:
        pytest.skip(f"the hard limit here is {hard}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))
    try:
        ensure_open_files(1200)
        assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] == wanted_open_files(1200)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
