"""Tests for the OpenAI-compatible stub server, over real HTTP with httpx."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.openai_stub import (
    FAULT_KINDS,
    StubConfig,
    StubServer,
    fault_for,
    http_date,
    start_stub,
)

pytestmark = pytest.mark.timeout(30)


def chat_body(text: str = "What is 6 * 7?", **extra: Any) -> dict[str, Any]:
    return {"model": "stub-model", "messages": [{"role": "user", "content": text}], **extra}


def post(stub: StubServer, body: dict[str, Any], **kwargs: Any) -> httpx.Response:
    return httpx.post(f"{stub.base_url}/chat/completions", json=body, **kwargs)


@pytest.fixture
def stub() -> Iterator[StubServer]:
    with start_stub() as server:
        yield server


def test_normal_completion_with_usage(stub: StubServer) -> None:
    response = post(stub, chat_body("x" * 400))
    assert response.status_code == 200
    data = response.json()
    assert data["object"] == "chat.completion" and data["model"] == "stub-model"
    choice = data["choices"][0]
    assert choice["message"] == {"role": "assistant", "content": "42", "refusal": None}
    assert choice["finish_reason"] == "stop"
    usage = data["usage"]
    assert usage["prompt_tokens"] == 100  # 400 characters / 4
    assert usage["completion_tokens"] >= 1
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert "completion_tokens_details" not in usage


def test_path_without_v1_and_models_endpoint(stub: StubServer) -> None:
    root = stub.base_url.removesuffix("/v1")
    assert httpx.post(f"{root}/chat/completions", json=chat_body()).status_code == 200
    models = httpx.get(f"{stub.base_url}/models").json()
    assert [m["id"] for m in models["data"]] == ["stub-model"]


def test_identical_requests_get_identical_responses(stub: StubServer) -> None:
    assert post(stub, chat_body()).json() == post(stub, chat_body()).json()


def test_marker_answer_uses_the_last_user_message(stub: StubServer) -> None:
    body = {
        "model": "m",
        "messages": [
            {"role": "system", "content": "[[answer:system]]"},
            {"role": "user", "content": "first [[answer:old]]"},
            {"role": "assistant", "content": "old"},
            {"role": "user", "content": [{"type": "text", "text": "now [[answer:Αθήνα 7]]"}]},
        ],
    }
    assert post(stub, body).json()["choices"][0]["message"]["content"] == "Αθήνα 7"


def test_custom_answer_fn() -> None:
    with start_stub(answer_fn=lambda body: str(len(body["messages"]))) as server:
        assert post(server, chat_body()).json()["choices"][0]["message"]["content"] == "1"


def test_max_tokens_truncates_with_finish_reason_length(stub: StubServer) -> None:
    data = post(stub, chat_body("[[answer:" + "word " * 100 + "]]", max_tokens=5)).json()
    assert data["choices"][0]["finish_reason"] == "length"
    assert len(data["choices"][0]["message"]["content"]) == 20


def test_latency_is_respected() -> None:
    with start_stub(latency_s=0.3) as server:
        started = time.monotonic()
        assert post(server, chat_body()).status_code == 200
        elapsed = time.monotonic() - started
    assert elapsed >= 0.3  # a lower bound only: a busy machine can only add time


def test_reasoning_fields() -> None:
    with start_stub(reasoning=True) as server:
        data = post(server, chat_body()).json()
    message, usage = data["choices"][0]["message"], data["usage"]
    assert message["content"] == "42" and "42" in message["reasoning_content"]
    reasoning_tokens = usage["completion_tokens_details"]["reasoning_tokens"]
    assert 0 < reasoning_tokens < usage["completion_tokens"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]


TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "python_exec",
            "parameters": {"type": "object", "properties": {"code": {"type": "string"}}},
        },
    }
]


def test_tool_call_then_tool_result_echo(stub: StubServer) -> None:
    body = chat_body("[[answer:7]]", tools=TOOLS)
    data = post(stub, body).json()
    choice = data["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    (call,) = choice["message"]["tool_calls"]
    assert call["type"] == "function" and call["function"]["name"] == "python_exec"
    assert json.loads(call["function"]["arguments"]) == {"code": "print('7')"}
    body["messages"] += [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call["id"], "content": "7\n"},
    ]
    follow_up = post(stub, body).json()["choices"][0]
    assert follow_up["message"]["content"] == "7" and follow_up["finish_reason"] == "stop"


def test_tool_call_with_invalid_json_arguments() -> None:
    with start_stub(tool_mode="invalid_json") as server:
        data = post(server, chat_body(tools=TOOLS)).json()
    arguments = data["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
    with pytest.raises(json.JSONDecodeError):
        json.loads(arguments)


def test_tool_mode_ignore_answers_directly() -> None:
    with start_stub(tool_mode="ignore") as server:
        data = post(server, chat_body(tools=TOOLS)).json()
    assert data["choices"][0]["message"]["content"] == "42"


def _check_fault(kind: str, server: StubServer, body: dict[str, Any]) -> None:
    """Send `body` once and assert it failed the way `kind` says."""
    if kind == "drop":
        with pytest.raises(httpx.TransportError):
            post(server, body)
        assert server.dropped == 1
        return
    if kind == "slow":
        with pytest.raises(httpx.ReadTimeout):
            post(server, body, timeout=0.3)
        return
    response = post(server, body)
    if kind == "gzip_bomb":  # 4 MiB of zeros, small enough to inflate here
        assert response.headers["Content-Encoding"] == "gzip"
        assert int(response.headers["Content-Length"]) < 8 << 10
        assert response.content == bytes(4 << 20)
    elif kind == "huge_body":
        assert response.status_code == 200 and len(response.content) > 4 << 20
        assert len(response.json()["choices"][0]["message"]["content"]) == 4 << 20
    elif kind == "malformed_json":
        assert response.status_code == 200
        with pytest.raises(json.JSONDecodeError):
            json.loads(response.text)
    elif kind == "empty_choices":
        assert response.status_code == 200 and response.json()["choices"] == []
    elif kind in ("error_200", "error_finish"):
        assert response.status_code == 200 and response.json().get("error", True)
        choices = response.json().get("choices") or [{"finish_reason": "error"}]
        assert choices[0]["finish_reason"] == "error" or "error" in response.json()
    elif kind == "surrogate_finish":
        assert response.status_code == 200 and "\\ud83d" in response.text
    elif kind == "context_length":
        assert response.status_code == 400
        assert response.json()["error"]["code"] == "context_length_exceeded"
        assert "maximum context length" in response.json()["error"]["message"]
    else:
        assert response.status_code == int(kind)
        assert response.json()["error"]["message"]


@pytest.mark.parametrize("kind", sorted(FAULT_KINDS))
def test_each_fault_kind_then_success_on_second_attempt(kind: str) -> None:
    with start_stub(fault_rate=1.0, fault_kinds=(kind,), slow_s=2.0, bomb_bytes=4 << 20) as server:
        body = chat_body(f"fault {kind}")
        _check_fault(kind, server, body)
        second = post(server, body)  # faults_per_request=1: the retry succeeds
        assert second.status_code == 200
        assert second.json()["choices"][0]["message"]["content"] == "42"
        assert [r.attempt for r in server.received] == [0, 1]
        assert [r.fault for r in server.received] == [kind, None]


def test_faults_per_request_two() -> None:
    with start_stub(fault_rate=1.0, fault_kinds=("503",), faults_per_request=2) as server:
        statuses = [post(server, chat_body()).status_code for _ in range(3)]
        assert statuses == [503, 503, 200]
        assert server.status_counts == {503: 2, 200: 1}


@pytest.mark.parametrize("retry_after", ["7", http_date(30)])
def test_429_sends_retry_after(retry_after: str) -> None:
    with start_stub(fault_rate=1.0, fault_kinds=("429",), retry_after=retry_after) as server:
        response = post(server, chat_body())
    assert response.status_code == 429
    assert response.headers["Retry-After"] == retry_after
    assert response.json()["error"]["type"] == "rate_limit_error"


def test_429_without_retry_after() -> None:
    with start_stub(fault_rate=1.0, fault_kinds=("429",)) as server:
        assert "Retry-After" not in post(server, chat_body()).headers


@pytest.mark.parametrize("echo", [True, False])
def test_echo_api_key_in_error_bodies(echo: bool) -> None:
    key = "sk-stub-should-be-redacted"
    with start_stub(fault_rate=1.0, fault_kinds=("401",), echo_api_key=echo) as server:
        response = post(server, chat_body(), headers={"Authorization": f"Bearer {key}"})
        assert server.headers[0]["authorization"] == f"Bearer {key}"
    assert response.status_code == 401
    assert (key in response.text) is echo


def _faulted_indices(seed: int, bodies: list[dict[str, Any]]) -> list[int]:
    config = StubConfig(fault_rate=0.5, fault_kinds=("500",), seed=seed)
    with start_stub(config) as server, httpx.Client(base_url=server.base_url) as client:
        statuses = [client.post("/chat/completions", json=body).status_code for body in bodies]
    return [i for i, status in enumerate(statuses) if status == 500]


def test_faults_are_deterministic_per_seed_and_body() -> None:
    bodies = [chat_body(f"question {i}") for i in range(40)]
    first, again = _faulted_indices(1, bodies), _faulted_indices(1, bodies)
    other_seed = _faulted_indices(2, bodies)
    assert first == again
    assert first != other_seed
    assert 8 <= len(first) <= 32  # about half of 40
    predicted = StubConfig(fault_rate=0.5, fault_kinds=("500",), seed=1)
    assert first == [i for i, b in enumerate(bodies) if fault_for(predicted, b, 0)]


def test_fault_kind_choice_is_deterministic() -> None:
    config = StubConfig(fault_rate=1.0, fault_kinds=("500", "502", "429"), seed=3)
    kinds = [fault_for(config, chat_body(str(i)), 0) for i in range(30)]
    assert kinds == [fault_for(config, chat_body(str(i)), 0) for i in range(30)]
    assert set(kinds) == {"500", "502", "429"}


def test_counters_records_and_reset(stub: StubServer) -> None:
    post(stub, chat_body("a"))
    httpx.post(f"{stub.base_url}/chat/completions", content=b"{not json")
    assert stub.total_requests == 2
    assert stub.status_counts == {200: 1, 400: 1}
    assert stub.requests == [chat_body("a")]
    assert stub.received[0].path == "/v1/chat/completions"
    stub.reset()
    assert (stub.total_requests, stub.status_counts, stub.requests) == (0, {}, [])


def test_set_config_changes_behaviour_at_runtime(stub: StubServer) -> None:
    stub.set_config(fault_rate=1.0, fault_kinds=("502",))
    assert post(stub, chat_body()).status_code == 502
    stub.set_config(StubConfig())
    assert post(stub, chat_body("fresh")).status_code == 200


def test_unknown_fault_kind_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown fault kinds"):
        StubConfig(fault_kinds=("418",))


async def test_64_concurrent_requests_overlap() -> None:
    with start_stub(latency_s=0.5) as server:
        limits = httpx.Limits(max_connections=128)
        async with httpx.AsyncClient(base_url=server.base_url, limits=limits) as client:
            responses = await asyncio.gather(
                *(client.post("/chat/completions", json=chat_body(str(i))) for i in range(64))
            )
        assert server.total_requests == 64
        # All 64 were held open at once: the latency overlaps rather than adds up.
        assert server.peak_in_flight == 64
    assert all(r.status_code == 200 for r in responses)
