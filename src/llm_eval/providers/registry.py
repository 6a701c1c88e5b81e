"""Provider names and their classes. A new provider is one module in this folder with one
class under `@register_provider`.

The registry imports every module of this folder when it is first read; those modules import
nothing heavy at module level (LiteLLM loads when a LiteLLM provider is built).
"""

from __future__ import annotations

from collections.abc import Callable

from llm_eval.providers.base import Provider
from llm_eval.registry import Registry
from llm_eval.schemas import ModelConfig

ProviderClass = type[Provider]
_PROVIDERS: Registry[ProviderClass] = Registry("provider", "llm_eval.providers")


def register_provider(name: str) -> Callable[[ProviderClass], ProviderClass]:
    """Class decorator: make `name` a valid `provider:` of a model entry."""
    return _PROVIDERS.register(name)


def provider_names() -> list[str]:
    """Names a model entry's `provider` may take."""
    return _PROVIDERS.names()


def provider_class(name: str) -> ProviderClass:
    """The class registered under `name`; a `RegistryError` (a ValueError) naming the known
    ones otherwise."""
    return _PROVIDERS.lookup(name)


def create_provider(model: ModelConfig) -> Provider:
    """Build the provider of one model entry."""
    return provider_class(model.provider)(model)


def wire_protocol_of(name: str) -> str:
    """The wire protocol provider `name` speaks: its class's `wire_protocol`, else its own
    name (a protocol no other provider shares, or an unknown provider)."""
    try:
        return provider_class(name).wire_protocol or name
    except ValueError:  # an unknown provider is reported by `validate`
        return name


def is_simulated(model: ModelConfig) -> bool:
    """Whether the entry's provider is simulated (it is given the expected answer): its
    numbers are not measurements, and reports say so. The provider class alone decides."""
    try:
        return provider_class(model.provider).simulated
    except ValueError:  # an unknown provider is reported by `validate`
        return False
