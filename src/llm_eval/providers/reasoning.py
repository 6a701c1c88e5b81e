"""The configured thinking budget as request parameters, shared by both OpenAI-style routes."""

from __future__ import annotations

from typing import Any

from llm_eval.schemas import ModelConfig


def reasoning_params(model: ModelConfig) -> dict[str, Any]:
    """Map the configured thinking budget onto what the route understands."""
    effort = model.reasoning_effort
    if effort is None:
        return {}
    if effort == "none":
        if model.model.startswith("openrouter/"):
            return {"extra_body": {"reasoning": {"enabled": False}}}
        return {"extra_body": {"thinking": {"type": "disabled"}}}
    return {"reasoning_effort": effort}
