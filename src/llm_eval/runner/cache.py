"""A response cache keyed by the full request, so a rerun replays instead of paying again."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from llm_eval.providers.base import ChatRequest, ChatResponse, ToolCall
from llm_eval.providers.registry import wire_protocol_of
from llm_eval.schemas import Usage

DEFAULT_CACHE_DIR = ".llm_eval_cache"


def cache_dir(root: Path) -> Path:
    """`LLM_EVAL_CACHE_DIR` if set, else `<config root>/.llm_eval_cache` (git-ignored)."""
    override = os.environ.get("LLM_EVAL_CACHE_DIR")
    return Path(override) if override else root / DEFAULT_CACHE_DIR


class ResponseCache:
    """One JSON file per request hash, written atomically; safe for concurrent readers.

    Replies are stored as the run keeps them (redacted, cut to `max_response_chars`), so the
    limit is part of every key: a run with a longer limit never replays a shorter cut.
    """

    def __init__(self, directory: Path, max_response_chars: int = 1_000_000) -> None:
        self.directory = directory
        self.max_response_chars = max_response_chars

    def key(self, request: ChatRequest) -> str:
        wire = wire_protocol_of(request.model.provider)
        payload = {**request.cache_payload(wire), "max_response_chars": self.max_response_chars}
        text = json.dumps(payload, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, request: ChatRequest) -> ChatResponse | None:
        path = self._path(self.key(request))
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return ChatResponse(
            content=data["content"],
            reasoning=data.get("reasoning"),
            tool_calls=[ToolCall(**call) for call in data.get("tool_calls", [])],
            usage=Usage.model_validate(data.get("usage", {})),
            finish_reason=data.get("finish_reason"),
            latency_s=data.get("latency_s", 0.0),
        )

    def put(self, request: ChatRequest, response: ChatResponse) -> None:
        path = self._path(self.key(request))
        path.parent.mkdir(parents=True, exist_ok=True)
        data = {
            "content": response.content,
            "reasoning": response.reasoning,
            "tool_calls": [call.__dict__ for call in response.tool_calls],
            "usage": response.usage.model_dump(),
            "finish_reason": response.finish_reason,
            "latency_s": response.latency_s,
        }
        temporary = path.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        os.replace(temporary, path)
