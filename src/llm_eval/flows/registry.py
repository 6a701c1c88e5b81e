"""Flow names and their functions. A new flow is one async function and one `@register_flow`."""

from __future__ import annotations

from collections.abc import Callable

from llm_eval.flows.base import Flow

FLOWS: dict[str, Flow] = {}


def register_flow(name: str) -> Callable[[Flow], Flow]:
    """Decorator: make `name` a valid `flow:` of a benchmark."""

    def register(flow: Flow) -> Flow:
        FLOWS[name] = flow
        return flow

    return register


def flow_names() -> list[str]:
    """Registered flow names (the built-in ones register when `llm_eval.flows` is imported)."""
    import llm_eval.flows  # noqa: F401

    return sorted(FLOWS)
