"""Model providers behind one seam (`Provider.complete`)."""

from llm_eval.providers.base import ChatRequest, ChatResponse, Provider, TaskHint, ToolCall
from llm_eval.providers.registry import create_provider, provider_names, register_provider

__all__ = [
    "ChatRequest",
    "ChatResponse",
    "Provider",
    "TaskHint",
    "ToolCall",
    "create_provider",
    "provider_names",
    "register_provider",
]
