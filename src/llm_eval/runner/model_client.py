"""`ModelClient`: one provider wrapped in the policies every call shares.

The response cache, the adaptive concurrency limit of the provider's connection and the retry
policy live here, once, instead of inside each provider. The client also decides what a
provider may see: the task's expected answer (`TaskHint`) goes to simulated providers only.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from datetime import UTC, datetime

from llm_eval.errors import ProviderError
from llm_eval.providers.base import ChatRequest, ChatResponse, Provider, TaskHint, ToolCall
from llm_eval.providers.body_limits import BodyLimits, body_limits
from llm_eval.providers.reply_errors import PARTIAL_CONTENT
from llm_eval.redaction import redact
from llm_eval.runner.breaker import CircuitBreaker
from llm_eval.runner.cache import ResponseCache
from llm_eval.runner.ratelimit import AdaptiveLimiter
from llm_eval.runner.retry import AttemptLog, RetryPolicy, call_with_retries
from llm_eval.schemas import CallRecord


@dataclass
class CallCounters:
    """Calls that reached a provider and calls answered from the cache, over a whole run."""

    model_calls: int = 0
    cache_hits: int = 0


@dataclass
class ModelClient:
    """Calls one model through cache, limiter and retries, recording each call."""

    provider: Provider
    policy: RetryPolicy
    limiter: AdaptiveLimiter
    cache: ResponseCache | None = None
    counters: CallCounters = field(default_factory=CallCounters)
    rng: random.Random = field(default_factory=random.Random)
    max_response_chars: int = 1_000_000
    body_limits: BodyLimits = field(default_factory=BodyLimits)
    breaker: CircuitBreaker = field(default_factory=CircuitBreaker)

    def request(self, request: ChatRequest, hint: TaskHint) -> ChatRequest:
        """`request` with the task hint attached only if the provider is simulated."""
        if not self.provider.simulated:
            return request
        return replace(request, hint=hint)

    async def call(
        self,
        request: ChatRequest,
        calls: list[CallRecord],
        on_retry: Callable[[ProviderError], None] | None = None,
        started: AttemptLog | None = None,
    ) -> ChatResponse:
        """One model call with every policy applied; appends its record to `calls`.

        `started` counts every attempt as it begins, so a task cut off by its timeout still
        records the requests it sent. Each attempt has `request.timeout_s` in all, however
        slowly the server trickles its bytes. The reply is redacted of secrets and cut to
        `max_response_chars` before anything (the cache included) stores it.
        """
        use_cache = self.cache is not None and self.provider.cacheable
        if self.cache is not None and use_cache:
            hit = self.cache.get(request)
            if hit is not None:
                self.counters.cache_hits += 1
                # The original call's latency and cost travel with its reply: a replay took
                # no time, but the model did, and reports measure the model.
                calls.append(CallRecord(latency_s=round(hit.latency_s, 6), attempts=0,
                                        cached=True, usage=hit.usage))  # fmt: skip
                return hit
        log = AttemptLog()
        started_at, started_clock = _now(), time.perf_counter()
        queued = 0.0  # seconds spent waiting for a connection slot, over all attempts

        def unless_endpoint_down() -> None:
            if self.breaker.is_open:
                log.attempts -= 1  # counted as it began, yet nothing is sent
                self.breaker.check()

        async def attempt() -> ChatResponse:
            nonlocal queued
            unless_endpoint_down()
            asked = time.perf_counter()
            async with self.limiter.slot():
                queued += time.perf_counter() - asked
                unless_endpoint_down()  # it may have opened while this attempt waited
                self.counters.model_calls += 1
                if started is not None:
                    started.attempts += 1
                try:
                    async with asyncio.timeout(request.timeout_s):
                        with body_limits(self.body_limits):
                            reply = await self.provider.complete(request)
                except TimeoutError:
                    raise ProviderError(
                        "timeout", f"no complete reply within {request.timeout_s} s", transient=True
                    ) from None
                except ProviderError as error:
                    self.breaker.failed(error)
                    raise
                self.breaker.succeeded()
                return reply

        def retried(error: ProviderError) -> None:
            if error.status_code == 429:
                self.limiter.rate_limited()
            if on_retry is not None:
                on_retry(error)

        try:
            response = await call_with_retries(
                attempt, self.policy, log, on_retry=retried, rng=self.rng
            )
        except ProviderError as error:
            elapsed = time.perf_counter() - started_clock - queued
            calls.append(
                CallRecord(
                    latency_s=elapsed,
                    queue_s=round(queued, 6),
                    attempts=log.attempts,
                    started_at=started_at,
                )
            )
            error.extra["attempts"] = str(sum(c.attempts for c in calls))
            raise
        self.limiter.succeeded()
        # Latency is the server's share (and retries'), not the wait for a free slot: a
        # one-slot local server would otherwise show the harness's own queue as latency.
        response.latency_s = response.latency_s or (time.perf_counter() - started_clock - queued)
        truncated = sanitize_response(response, self.max_response_chars)
        calls.append(
            CallRecord(
                latency_s=round(response.latency_s, 6),
                queue_s=round(queued, 6),
                attempts=log.attempts,
                usage=response.usage,
                finish_reason=response.finish_reason,
                started_at=started_at,
                truncated=truncated,
            )
        )
        if self.cache is not None and use_cache:
            self.cache.put(request, response)
        return response


def sanitize_response(response: ChatResponse, max_chars: int) -> bool:
    """Redact secrets from every text of a reply and cut its texts to `max_chars`.

    Returns whether anything was cut. A provider can echo a key in any string it sends: its
    content, reasoning, finish reason, a tool call's id, name or arguments; none of those may
    reach a trace, the cache or MLflow. A lone surrogate (valid JSON, not UTF-8) is stored as
    its escape text, and a value of the wrong type (a null name, a list for content) as text,
    so the row is kept whatever the server sent.
    """
    for attribute in fields(response):  # every text field, those added later too
        value = getattr(response, attribute.name)
        if isinstance(value, str) or (attribute.type == "str | None" and value is not None):
            setattr(response, attribute.name, redact(_as_text(value)))
    cut = False
    if response.content is not None:
        response.content, cut_content = _bounded(response.content, max_chars)
        cut = cut or cut_content
    if response.reasoning is not None:
        response.reasoning, cut_reasoning = _bounded(response.reasoning, max_chars)
        cut = cut or cut_reasoning
    response.tool_calls = [
        ToolCall(
            redact(_as_text(call.id)),
            redact(_as_text(call.name)),
            redact(_as_text(call.arguments))[:max_chars],
        )
        for call in response.tool_calls
    ]
    return cut


def _as_text(value: object) -> str:
    """A reply's value as text: a string as is, nothing as empty, anything else as JSON."""
    if isinstance(value, str):
        return value
    return "" if value is None else json.dumps(value, ensure_ascii=False, default=str)


def partial_content(error: ProviderError, max_chars: int) -> str | None:
    """The text generated before a provider reported `error`, as it may be stored."""
    text = error.extra.get(PARTIAL_CONTENT)
    return _bounded(redact(text), max_chars)[0] if text else None


def _bounded(text: str, max_chars: int) -> tuple[str, bool]:
    if len(text) <= max_chars:
        return text, False
    return text[:max_chars], True


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")
