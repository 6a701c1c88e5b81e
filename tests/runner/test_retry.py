"""Retry classification and the backoff policy."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from llm_eval.errors import ProviderError
from llm_eval.providers.failures import is_transient_status, parse_retry_after
from llm_eval.providers.litellm_client import classify_exception
from llm_eval.runner.retry import AttemptLog, RetryPolicy, call_with_retries


@pytest.mark.parametrize("status", [408, 409, 425, 429, 500, 502, 503, 504, 529, 599])
def test_rate_limits_timeouts_and_server_errors_are_transient(status: int) -> None:
    assert is_transient_status(status)


@pytest.mark.parametrize("status", [None, 400, 401, 403, 404, 413, 422])
def test_client_errors_are_permanent(status: int | None) -> None:
    assert not is_transient_status(status)


def test_retry_after_reads_seconds_and_http_dates() -> None:
    assert parse_retry_after("7") == 7.0
    assert parse_retry_after("-3") == 0.0
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    seconds = parse_retry_after(later)
    assert seconds is not None and 25 <= seconds <= 31


def test_delay_grows_exponentially_with_jitter_and_honours_retry_after_up_to_a_cap() -> None:
    policy = RetryPolicy(max_attempts=5, base_s=1.0, max_s=8.0, retry_after_cap_s=10.0)
    rng = random.Random(0)
    plain = ProviderError("http_503", "busy", transient=True, status_code=503)
    for attempt, ceiling in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (6, 8.0)]:
        assert ceiling / 2 <= policy.delay(attempt, plain, rng) <= ceiling
    told = ProviderError("rate_limit", "slow", transient=True, status_code=429, retry_after_s=99)
    assert policy.delay(1, told, rng) == 10.0


async def test_permanent_errors_fail_at_once_and_transient_ones_use_every_attempt() -> None:
    policy = RetryPolicy(max_attempts=3, base_s=0.0, max_s=0.0)
    permanent = ProviderError("http_401", "bad key", transient=False, status_code=401)
    transient = ProviderError("http_503", "busy", transient=True, status_code=503)
    for error, expected in [(permanent, 1), (transient, 3)]:
        log = AttemptLog()

        async def fail(error: ProviderError = error) -> None:
            raise error

        with pytest.raises(ProviderError):
            await call_with_retries(fail, policy, log)
        assert log.attempts == expected


class StatusError(Exception):
    def __init__(self, message: str, status_code: int) -> None:
        super().__init__(message)
        self.status_code = status_code


@pytest.mark.parametrize(
    ("exc", "kind", "transient"),
    [
        (StatusError("Too many requests", 429), "rate_limit", True),
        (StatusError("upstream failed", 502), "http_502", True),
        (StatusError("invalid api key", 401), "http_401", False),
        (StatusError("context_length_exceeded: prompt too long", 400), "context_length", False),
        (TimeoutError("read timed out"), "timeout", True),
    ],
)
def test_provider_exceptions_are_classified(exc: Exception, kind: str, transient: bool) -> None:
    error = classify_exception(exc)
    assert (error.kind, error.transient) == (kind, transient)
