"""Flow names and their functions. A new flow is one module in this folder with one async
function under `@register_flow`; the registry imports the folder's modules when first read."""

from __future__ import annotations

from collections.abc import Callable

from llm_eval.flows.base import Flow
from llm_eval.registry import Registry

FLOWS: Registry[Flow] = Registry("flow", "llm_eval.flows")


def register_flow(name: str) -> Callable[[Flow], Flow]:
    """Decorator: make `name` a valid `flow:` of a benchmark."""
    return FLOWS.register(name)


def flow_names() -> list[str]:
    """Registered flow names, the built-in ones and those of any module in this folder."""
    return FLOWS.names()
