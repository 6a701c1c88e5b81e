"""Provider names and lazy factories, so heavy clients are imported only when used."""

from __future__ import annotations

from collections.abc import Callable

from llm_eval.providers.base import Provider
from llm_eval.schemas import ModelConfig


def _litellm(model: ModelConfig) -> Provider:
    from llm_eval.providers.litellm_client import LiteLLMProvider

    return LiteLLMProvider(model)


def _mock(model: ModelConfig) -> Provider:
    from llm_eval.providers.mock import MockProvider

    return MockProvider(model)


_FACTORIES: dict[str, Callable[[ModelConfig], Provider]] = {
    "litellm": _litellm,
    "mock": _mock,
}


def provider_names() -> list[str]:
    """Names a model entry's `provider` may take."""
    return sorted(_FACTORIES)


def create_provider(model: ModelConfig) -> Provider:
    """Build the provider of one model entry."""
    try:
        factory = _FACTORIES[model.provider]
    except KeyError:
        raise ValueError(
            f"unknown provider {model.provider!r}; known: {', '.join(provider_names())}"
        ) from None
    return factory(model)
