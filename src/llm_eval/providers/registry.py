"""Provider names and their classes. A new provider is one class and one `@register_provider`.

The built-in providers register themselves when their modules are imported; those modules
import nothing heavy at module level (LiteLLM loads when a LiteLLM provider is built).
"""

from __future__ import annotations

from collections.abc import Callable

from llm_eval.providers.base import Provider
from llm_eval.schemas import ModelConfig

ProviderClass = type[Provider]
_PROVIDERS: dict[str, ProviderClass] = {}


def register_provider(name: str) -> Callable[[ProviderClass], ProviderClass]:
    """Class decorator: make `name` a valid `provider:` of a model entry."""

    def register(cls: ProviderClass) -> ProviderClass:
        _PROVIDERS[name] = cls
        return cls

    return register


def _builtins() -> dict[str, ProviderClass]:
    import llm_eval.providers.litellm_client
    import llm_eval.providers.mock
    import llm_eval.providers.openai_compatible
    import llm_eval.providers.scripted  # noqa: F401  (each registers on import)

    return _PROVIDERS


def provider_names() -> list[str]:
    """Names a model entry's `provider` may take."""
    return sorted(_builtins())


def provider_class(name: str) -> ProviderClass:
    """The class registered under `name`; ValueError naming the known ones otherwise."""
    try:
        return _builtins()[name]
    except KeyError:
        known = ", ".join(provider_names())
        raise ValueError(f"unknown provider {name!r}; known: {known}") from None


def create_provider(model: ModelConfig) -> Provider:
    """Build the provider of one model entry."""
    return provider_class(model.provider)(model)


def is_simulated(model: ModelConfig) -> bool:
    """Whether the entry's provider is simulated (it is given the expected answer): its
    numbers are not measurements, and reports say so. The provider class alone decides."""
    try:
        return provider_class(model.provider).simulated
    except ValueError:  # an unknown provider is reported by `validate`
        return False
