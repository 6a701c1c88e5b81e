"""The direct route to OpenAI-compatible servers: the request posted over aiohttp, no LiteLLM.

OpenRouter, OpenCode Zen, llama.cpp, vLLM, SGLang and Ollama all speak the chat-completions
protocol. Going direct skips LiteLLM's per-call work (its import alone costs seconds of
start-up) and the openai SDK's typed layers: the body built by `chat_completions` is posted as
bytes by `http_transport`, and the reply's bytes are read by `chat_completions` again. The
request sent, the rows written and the errors raised are the LiteLLM route's
(`tests/runner/test_provider_routes.py` and `tests/runner/test_route_golden.py` compare them).
"""

from __future__ import annotations

import json
import os
import time
from typing import ClassVar

from llm_eval.errors import ProviderError
from llm_eval.providers import chat_completions as protocol
from llm_eval.providers.base import ChatRequest, ChatResponse, Provider
from llm_eval.providers.body_limits import ResponseTooLarge
from llm_eval.providers.http_transport import HttpReply, close_sessions, post_json
from llm_eval.providers.registry import register_provider
from llm_eval.redaction import redact
from llm_eval.schemas import ModelConfig


@register_provider("openai_compatible")
class OpenAICompatibleProvider(Provider):
    """Any server with an OpenAI chat-completions endpoint at `api_base`."""

    wire_protocol: ClassVar[str | None] = protocol.PROTOCOL

    @classmethod
    def config_problems(cls, model: ModelConfig) -> list[tuple[str | None, str]]:
        problem = protocol.api_base_problem(model)
        return [("api_base" if model.api_base else None, problem)] if problem else []

    def __init__(self, model: ModelConfig) -> None:
        super().__init__(model)
        self._key = os.environ.get(model.api_key_env, "") if model.api_key_env else ""
        base = protocol.endpoint_base(model)
        if base is None:
            raise ValueError(protocol.api_base_problem(model))
        # Everything that depends on the model entry alone is computed once, not per call.
        self._url = f"{base}/chat/completions"
        self._fixed = protocol.fixed_body_fields(model)
        self._headers = {
            # Local servers take any key; LiteLLM sends a placeholder too.
            "Authorization": f"Bearer {self._key or 'no-key-needed'}",
            "Content-Type": "application/json",
            "Accept": "application/json",
            **protocol.request_headers(model),
        }

    async def complete(self, request: ChatRequest) -> ChatResponse:
        payload = json.dumps(protocol.request_body(request, self._fixed)).encode()
        started = time.perf_counter()
        try:
            reply = await post_json(self._url, payload, self._headers)
        except Exception as exc:  # aiohttp raises many types; classified in one place
            raise self._failure(exc) from None
        if reply.status >= 400:
            raise self._status_error(reply)
        return protocol.parse_reply(reply.body, self.model, time.perf_counter() - started)

    def _status_error(self, reply: HttpReply) -> ProviderError:
        message, body = protocol.error_reply_message(reply.status, reply.body)
        return protocol.status_error(reply.status, self._redact(message), reply.header, body)

    def _failure(self, exc: Exception) -> ProviderError:
        """A call that got no reply, as the protocol's kinds."""
        import aiohttp

        if isinstance(exc, ResponseTooLarge):
            return protocol.transport_error("response_too_large", str(exc))
        described = self._redact(f"{type(exc).__name__}: {exc}")
        if isinstance(exc, aiohttp.InvalidURL | ValueError | TypeError):
            # The client refused its own settings before sending: no retry can help.
            return protocol.transport_error("config_error", described)
        if isinstance(exc, aiohttp.ServerTimeoutError | TimeoutError):
            return protocol.transport_error("timeout", "Request timed out.")
        if isinstance(exc, aiohttp.ClientError | OSError):
            return protocol.transport_error("connection", f"Connection error: {described}")
        return ProviderError(type(exc).__name__, described, transient=False)

    def _redact(self, text: str) -> str:
        return redact(text, [self._key] if self._key else None)[:1000]

    async def aclose(self) -> None:
        await close_sessions()
