"""The model client: cache, shared limiter and retries in one place; hints only for simulations."""

from __future__ import annotations

from pathlib import Path

from llm_eval.errors import ProviderError
from llm_eval.providers.base import ChatRequest, TaskHint
from llm_eval.providers.scripted import ScriptedProvider
from llm_eval.runner.cache import ResponseCache
from llm_eval.runner.model_client import ModelClient
from llm_eval.runner.ratelimit import AdaptiveLimiter
from llm_eval.runner.retry import RetryPolicy
from llm_eval.schemas import CallRecord, ModelConfig

HINT = TaskHint("bench", "t1", "42", "single_turn")
MODEL = ModelConfig(provider="scripted", model="local/x", api_base="http://127.0.0.1:1/v1")


class RealProvider(ScriptedProvider):
    """A scripted provider that declares itself real: it must never see the answer."""

    simulated = False


def request() -> ChatRequest:
    return ChatRequest("m", MODEL, [{"role": "user", "content": "q"}], None, 16, 5.0)


def client(provider: ScriptedProvider, cache: ResponseCache | None = None) -> ModelClient:
    policy = RetryPolicy(max_attempts=3, base_s=0.0, max_s=0.0)
    return ModelClient(provider, policy, AdaptiveLimiter(4), cache)


async def test_the_expected_answer_reaches_simulated_providers_only() -> None:
    real = client(RealProvider(MODEL, ["Final answer: 1"]))
    await real.call(real.request(request(), HINT), [])
    simulated = client(ScriptedProvider(MODEL))
    await simulated.call(simulated.request(request(), HINT), [])
    assert real.provider.requests[0].hint is None  # type: ignore[attr-defined]
    assert simulated.provider.requests[0].hint == HINT  # type: ignore[attr-defined]


async def test_retries_are_counted_and_a_429_halves_the_shared_limit() -> None:
    busy = ProviderError("rate_limit", "slow down", transient=True, status_code=429)
    provider = RealProvider(MODEL, [busy, busy, "Final answer: 42"])
    model_client = client(provider)
    calls: list[CallRecord] = []
    response = await model_client.call(request(), calls)
    assert response.content == "Final answer: 42"
    assert calls[0].attempts == 3 and model_client.counters.model_calls == 3
    assert model_client.limiter.limit == 1


async def test_an_identical_request_is_replayed_from_the_cache(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path)
    first = client(RealProvider(MODEL, ["Final answer: 7"]), cache)
    await first.call(request(), [])
    second = client(RealProvider(MODEL, ["never sent"]), cache)
    calls: list[CallRecord] = []
    response = await second.call(request(), calls)
    assert response.content == "Final answer: 7" and calls[0].cached
    assert second.counters.cache_hits == 1 and second.counters.model_calls == 0


def test_providers_declare_their_connection_and_capacity() -> None:
    local = RealProvider(MODEL.model_copy(update={"max_concurrency": 1}))
    assert local.connection_key() == "scripted|http://127.0.0.1:1/v1"
    assert local.max_connections() == 1


async def test_waiting_for_a_slot_is_queue_time_not_latency() -> None:
    """Two calls against a one-slot backend: the second waits, and says so apart."""
    import asyncio

    provider = RealProvider(MODEL, ["Final answer: 1", "Final answer: 2"], delay_s=0.3)
    model_client = ModelClient(
        provider, RetryPolicy(max_attempts=1, base_s=0.0, max_s=0.0), AdaptiveLimiter(1), None
    )
    first: list[CallRecord] = []
    second: list[CallRecord] = []
    await asyncio.gather(model_client.call(request(), first), model_client.call(request(), second))
    waited, served = sorted([*first, *second], key=lambda record: record.queue_s)[::-1]
    assert waited.queue_s >= 0.25 and served.queue_s < 0.05
    assert 0.25 <= waited.latency_s < 0.45, "the wait for the slot is not latency"


def test_every_text_of_a_reply_is_made_writable_whatever_its_type() -> None:
    import json

    from llm_eval.providers.base import ChatResponse, ToolCall
    from llm_eval.runner.model_client import sanitize_response

    half = "\ud83d"
    response = ChatResponse(
        content=f"a{half}",
        reasoning=f"r{half}",
        finish_reason=f"stop{half}",
        tool_calls=[ToolCall(f"id{half}", None, None)],  # type: ignore[arg-type]
    )
    sanitize_response(response, 1000)
    calls = [vars(call) for call in response.tool_calls]
    texts = [response.content, response.reasoning, response.finish_reason, calls]
    json.dumps(texts, ensure_ascii=False).encode("utf-8")  # no lone surrogate is left
    assert response.finish_reason == "stop\\ud83d"
    assert response.tool_calls == [ToolCall("id\\ud83d", "", "")]
    parts = ChatResponse(content=[{"type": "text", "text": "42"}])  # type: ignore[arg-type]
    sanitize_response(parts, 1000)
    assert parts.content == '[{"type": "text", "text": "42"}]'
