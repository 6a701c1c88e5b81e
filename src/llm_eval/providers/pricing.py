"""Cost of a call from the prices configured on the model entry."""

from __future__ import annotations

from llm_eval.schemas import ModelConfig, Usage


def configured_cost(model: ModelConfig, usage: Usage) -> float | None:
    """USD cost from configured per-million-token prices; None when a price or count is unknown."""
    if model.input_cost_per_mtok is None or model.output_cost_per_mtok is None:
        return None
    if usage.prompt_tokens is None or usage.completion_tokens is None:
        return None
    return (
        usage.prompt_tokens * model.input_cost_per_mtok
        + usage.completion_tokens * model.output_cost_per_mtok
    ) / 1_000_000
