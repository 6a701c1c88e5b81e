"""Usage a provider misreports is unknown, never a number that refunds a cap."""

from __future__ import annotations

from typing import Any

import pytest

from llm_eval.providers.chat_completions import usage_of
from llm_eval.providers.usage_counts import cost
from llm_eval.schemas import ModelConfig

PRICED = ModelConfig(provider="openai_compatible", model="openai/m",
                     input_cost_per_mtok=1, output_cost_per_mtok=1)  # fmt: skip


@pytest.mark.parametrize(
    "raw",
    [
        {"prompt_tokens": -1_000_000, "completion_tokens": 10, "total_tokens": 20},
        {"prompt_tokens": 10**12, "completion_tokens": 10, "total_tokens": 20},
        {"prompt_tokens": "10", "completion_tokens": 10, "total_tokens": 20},
        {"prompt_tokens": True, "completion_tokens": 10, "total_tokens": 20},
    ],
    ids=["negative", "absurd", "text", "bool"],
)
def test_a_misreported_count_is_unknown_and_so_is_the_cost(raw: dict[str, Any]) -> None:
    usage = usage_of(raw, PRICED)
    assert usage.prompt_tokens is None and usage.cost_usd is None
    assert usage.completion_tokens == 10 and usage.total_tokens == 20


def test_a_missing_total_is_the_sum_of_its_parts_or_unknown() -> None:
    assert usage_of({"prompt_tokens": 7, "completion_tokens": 5}, PRICED).total_tokens == 12
    assert usage_of({"prompt_tokens": 7}, PRICED).total_tokens is None
    assert usage_of({"total_tokens": -3, "prompt_tokens": 1, "completion_tokens": 2},
                    PRICED).total_tokens == 3  # fmt: skip
    assert usage_of(None, PRICED).total_tokens is None


def test_a_price_table_cost_must_be_a_finite_non_negative_number() -> None:
    assert cost(0.25) == 0.25 and cost(0) == 0.0
    assert cost(-19.96) is None and cost(float("nan")) is None and cost(float("inf")) is None
    assert cost("0.1") is None and cost(None) is None
