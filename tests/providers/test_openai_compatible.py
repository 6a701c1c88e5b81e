"""The direct OpenAI-compatible route, piece by piece: request, reply, errors, session, config.

Each piece on its own; `tests/runner/test_provider_routes.py` proves the whole route writes
the LiteLLM route's rows against a real server.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from llm_eval.config.validation import validate
from llm_eval.errors import ProviderError
from llm_eval.providers.base import ChatRequest
from llm_eval.providers.chat_completions import (
    OPENROUTER_BASE,
    endpoint_base,
    error_reply_message,
    parse_reply,
    request_body,
    status_error,
)
from llm_eval.providers.failures import retry_after_from_headers
from llm_eval.providers.http_transport import close_sessions, shared_session
from llm_eval.providers.registry import create_provider, provider_names
from llm_eval.schemas import ModelConfig
from tests.support.openai_stub import http_date

TOOLS = [{"type": "function", "function": {"name": "python", "parameters": {}}}]
MESSAGES = [{"role": "user", "content": "hi"}]


def model(**fields: Any) -> ModelConfig:
    values: dict[str, Any] = {"provider": "openai_compatible", "model": "openai/local",
                              "api_base": "http://127.0.0.1:8080/v1"}  # fmt: skip
    return ModelConfig(**{**values, **fields})


def body_of(config: ModelConfig, tools: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return request_body(ChatRequest("m", config, MESSAGES, tools, 64, 5.0))


# -- request ---------------------------------------------------------------------------------


def test_the_body_carries_the_route_free_model_and_only_the_settings_given() -> None:
    assert body_of(model()) == {"model": "local", "messages": MESSAGES, "max_tokens": 64}
    warm = body_of(model(temperature=0.0), TOOLS)
    assert warm["temperature"] == 0.0 and warm["tools"] == TOOLS


def test_thinking_settings_are_sent_as_litellm_sends_them() -> None:
    assert body_of(model(reasoning_effort="high"))["reasoning_effort"] == "high"
    assert body_of(model(reasoning_effort="none"))["thinking"] == {"type": "disabled"}
    router = model(model="openrouter/deepseek/deepseek-v4-pro", api_base=None)
    none = body_of(router.model_copy(update={"reasoning_effort": "none"}))
    assert none["model"] == "deepseek/deepseek-v4-pro"
    assert none["reasoning"] == {"enabled": False} and none["usage"] == {"include": True}


def test_extra_params_are_sent_and_an_extra_body_is_flattened() -> None:
    config = model(extra_params={"top_p": 0.5, "extra_body": {"min_p": 0.1}})
    body = body_of(config)
    assert body["top_p"] == 0.5 and body["min_p"] == 0.1 and "extra_body" not in body


def test_openrouter_models_need_no_api_base_others_do() -> None:
    assert endpoint_base(model(model="openrouter/x/y", api_base=None)) == OPENROUTER_BASE
    assert endpoint_base(model(api_base="http://h:1/v1/")) == "http://h:1/v1"
    assert endpoint_base(model(api_base=None)) is None


# -- configuration ---------------------------------------------------------------------------


def test_the_provider_is_registered_beside_litellm() -> None:
    assert {"litellm", "openai_compatible"} <= set(provider_names())
    assert type(create_provider(model())).__name__ == "OpenAICompatibleProvider"


@pytest.mark.parametrize(
    ("api_base", "expected"),
    [("ftp://host/v1", "is not an http(s) URL"), ("127.0.0.1:8080", "is not an http(s) URL")],
)
def test_a_bad_api_base_is_a_problem_naming_its_line(
    config_copy: Path, api_base: str, expected: str
) -> None:
    params = config_copy / "configs" / "models.yaml"
    text = params.read_text(encoding="utf-8")
    params.write_text(text.replace("http://127.0.0.1:8080/v1", api_base), encoding="utf-8")
    problems = validate(str(config_copy)).problems
    (problem,) = [p for p in problems if expected in str(p)]
    assert "local-llama-cpp" in str(problem) and "models.yaml" in str(problem)
    line = text.splitlines().index("    api_base: http://127.0.0.1:8080/v1") + 1
    assert f":{line}" in str(problem)


def test_a_model_without_any_endpoint_is_a_problem(config_copy: Path) -> None:
    params = config_copy / "configs" / "models.yaml"
    text = params.read_text(encoding="utf-8")
    params.write_text(text.replace("    api_base: http://127.0.0.1:8080/v1\n", ""), "utf-8")
    rendered = "\n".join(str(p) for p in validate(str(config_copy)).problems)
    assert "'local-llama-cpp': an openai_compatible model needs api_base" in rendered


# -- reply -----------------------------------------------------------------------------------


def reply(message: dict[str, Any], usage: dict[str, Any] | None = None, **extra: Any) -> bytes:
    choice = {"index": 0, "message": message, "finish_reason": extra.pop("finish", "stop")}
    return json.dumps({"choices": [choice], "usage": usage, **extra}).encode()


def test_a_reply_maps_content_reasoning_usage_and_cost() -> None:
    usage = {"prompt_tokens": 1000, "completion_tokens": 500, "total_tokens": 1500,
             "completion_tokens_details": {"reasoning_tokens": 300}}  # fmt: skip
    raw = reply({"content": "42", "reasoning_content": "think"}, usage, finish="length")
    priced = model(input_cost_per_mtok=2.0, output_cost_per_mtok=10.0)
    response = parse_reply(raw, priced, 0.25)
    assert (response.content, response.reasoning, response.finish_reason) == (
        "42", "think", "length"
    )  # fmt: skip
    assert response.usage.reasoning_tokens == 300 and response.usage.total_tokens == 1500
    assert response.usage.cost_usd == pytest.approx(0.007)
    assert response.usage.cost_source == "configured" and response.latency_s == 0.25


def test_an_unpriced_model_has_unknown_cost_and_openrouter_reasoning_is_read() -> None:
    response = parse_reply(
        reply({"content": "x", "reasoning": "r"}, {"prompt_tokens": 3}), model(), 0
    )
    assert response.reasoning == "r" and response.usage.prompt_tokens == 3
    assert response.usage.cost_usd is None and response.usage.cost_source is None
    assert response.usage.reasoning_tokens is None


def test_tool_calls_keep_their_raw_arguments_and_get_an_id_when_missing() -> None:
    calls = [{"id": "c1", "type": "function", "function": {"name": "python", "arguments": "{"}},
             {"type": "function", "function": {"name": "python", "arguments": "{}"}}]  # fmt: skip
    response = parse_reply(reply({"content": None, "tool_calls": calls}), model(), 0)
    assert response.content is None
    assert [(c.id, c.name, c.arguments) for c in response.tool_calls] == [
        ("c1", "python", "{"), ("call_1", "python", "{}")
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("raw", "kind"),
    [
        (b'{"choices": [{"mess', "malformed_response"),
        (b"[]", "malformed_response"),
        (b'{"choices": []}', "empty_response"),
    ],  # fmt: skip
)
def test_an_unusable_reply_is_a_transient_error(raw: bytes, kind: str) -> None:
    with pytest.raises(ProviderError) as caught:
        parse_reply(raw, model(), 0)
    assert caught.value.kind == kind and caught.value.transient


# -- errors ----------------------------------------------------------------------------------


def status_exception(
    status: int, body: dict[str, Any], headers: dict[str, str] | None = None
) -> ProviderError:
    """What the protocol makes of an HTTP error reply with this status, body and headers."""
    message, error = error_reply_message(status, json.dumps(body).encode())
    return status_error(status, message, (headers or {}).get, error)


def error_body(message: str, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": "x", "code": code}}


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after": "3"}, 3.0),
        ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
        ({}, None),
    ],  # fmt: skip
)
def test_a_rate_limit_is_transient_with_its_retry_after(
    headers: dict[str, str], seconds: float | None
) -> None:
    error = status_exception(429, error_body("slow down"), headers)
    assert (error.kind, error.transient, error.status_code) == ("rate_limit", True, 429)
    assert error.retry_after_s == seconds


def test_retry_after_as_an_http_date_counts_down_to_that_moment() -> None:
    wait = retry_after_from_headers({"retry-after": http_date(30)}.get)
    assert wait is not None and 25 < wait <= 30


@pytest.mark.parametrize(
    ("status", "body", "kind", "transient"),
    [
        (503, error_body("overloaded"), "http_503", True),
        (500, error_body("oops"), "http_500", True),
        (400, error_body("too long", "context_length_exceeded"), "context_length", False),
        (
            400,
            error_body("This model's maximum context length is 8192 tokens"),
            "context_length",
            False,
        ),
        (400, error_body("bad request"), "http_400", False),
        (401, error_body("Incorrect API key", "invalid_api_key"), "http_401", False),
        (404, error_body("no such model", "model_not_found"), "http_404", False),
    ],  # fmt: skip
)
def test_http_errors_are_classified_as_on_the_litellm_route(
    status: int, body: dict[str, Any], kind: str, transient: bool
) -> None:
    error = status_exception(status, body)
    assert (error.kind, error.transient, error.status_code) == (kind, transient, status)


def test_an_error_reply_is_worded_as_the_sdk_words_it() -> None:
    message, error = error_reply_message(404, json.dumps(error_body("no such model")).encode())
    assert message == "Error code: 404 - no such model" and isinstance(error, dict)
    assert error_reply_message(502, b"<html>bad gateway</html>") == (
        "Error code: 502", "<html>bad gateway</html>"
    )  # fmt: skip


def test_timeouts_and_connection_errors_are_transient_and_keys_are_redacted() -> None:
    secret = "sk-abcdef0123456789abcdef"
    provider: Any = create_provider(model())
    provider._key = secret
    timeout = provider._failure(aiohttp.ServerTimeoutError("read timed out"))
    assert (timeout.kind, timeout.transient) == ("timeout", True)
    dropped = provider._failure(aiohttp.ServerDisconnectedError())
    assert (dropped.kind, dropped.transient) == ("connection", True)
    assert dropped.message.startswith("Connection error: ServerDisconnectedError")
    refused = provider._failure(aiohttp.ClientOSError(111, f"refused with {secret}"))
    assert (refused.kind, refused.transient) == ("connection", True)
    assert secret not in refused.message
    bad_url = provider._failure(aiohttp.InvalidURL("nowhere"))
    assert (bad_url.kind, bad_url.transient) == ("config_error", False)


# -- session ---------------------------------------------------------------------------------


def test_one_session_per_event_loop_closed_at_the_end() -> None:
    async def scenario() -> aiohttp.ClientSession:
        first = shared_session()
        assert shared_session() is first
        await close_sessions()
        assert first.closed and shared_session() is not first
        await close_sessions()
        return first

    first = asyncio.run(scenario())
    assert first.closed
