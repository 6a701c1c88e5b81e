"""The direct route to OpenAI-compatible servers: the `openai` SDK, without LiteLLM.

OpenRouter, OpenCode Zen, llama.cpp, vLLM, SGLang and Ollama all speak the chat-completions
protocol, and LiteLLM itself calls this SDK for them; going direct skips LiteLLM's per-call
work (its import alone costs seconds of start-up). The request sent, the rows written and the
errors raised are the LiteLLM route's (`tests/runner/test_provider_routes.py` compares them).
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

from llm_eval.errors import ProviderError
from llm_eval.providers.base import ChatRequest, ChatResponse, Provider
from llm_eval.providers.openai_clients import close_clients, shared_client
from llm_eval.providers.openai_errors import classify_sdk_error
from llm_eval.providers.openai_reply import parse_reply
from llm_eval.providers.openai_request import (
    api_base_problem,
    endpoint_base,
    request_body,
    request_headers,
)
from llm_eval.providers.registry import register_provider
from llm_eval.schemas import ModelConfig

if TYPE_CHECKING:
    from openai import AsyncOpenAI


@register_provider("openai_compatible")
class OpenAICompatibleProvider(Provider):
    """Any server with an OpenAI chat-completions endpoint at `api_base`."""

    @classmethod
    def config_problems(cls, model: ModelConfig) -> list[tuple[str | None, str]]:
        problem = api_base_problem(model)
        return [("api_base" if model.api_base else None, problem)] if problem else []

    def __init__(self, model: ModelConfig) -> None:
        super().__init__(model)
        self._key = os.environ.get(model.api_key_env, "") if model.api_key_env else ""
        base = endpoint_base(model)
        if base is None:
            raise ValueError(api_base_problem(model))
        self._base = base

    def _client(self) -> AsyncOpenAI:
        # Local servers take any key; the SDK insists on one being present (as LiteLLM does).
        return shared_client(self._base, self._key or "no-key-needed")

    async def complete(self, request: ChatRequest) -> ChatResponse:
        body = request_body(request)
        started = time.perf_counter()
        try:
            reply = await self._client().chat.completions.with_raw_response.create(
                model=body.pop("model"),
                messages=body.pop("messages"),
                extra_body=body,
                extra_headers=request_headers(self.model),
                timeout=request.timeout_s,
            )
            raw = await reply.http_response.aread()
        except ProviderError:
            raise
        except Exception as exc:  # the SDK and its transport raise many types; classify here
            raise classify_sdk_error(exc, self._key) from None
        return parse_reply(raw, self.model, time.perf_counter() - started)

    async def aclose(self) -> None:
        await close_clients()
