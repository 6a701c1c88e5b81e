"""The exception tree: one root, user-facing errors apart from provider failures."""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, field


class LlmEvalError(Exception):
    """Root of every error this package raises on purpose."""


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with the user's input, located as precisely as we can."""

    path: str
    line: int | None
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line is not None else self.path
        return f"{where}: {self.message}"


class ConfigError(LlmEvalError):
    """The configuration or a task file is invalid; carries every problem found."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


class UsageError(LlmEvalError):
    """A command-line option or combination of options is invalid."""


class MissingApiKeyError(LlmEvalError):
    """A selected model needs an API key that is not in the environment."""


@dataclass
class ProviderError(LlmEvalError):
    """A model call failed; `transient` decides whether the retry policy tries again."""

    kind: str
    message: str
    _: KW_ONLY
    transient: bool
    status_code: int | None = None
    retry_after_s: float | None = None
    extra: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        super().__init__(f"{self.kind}: {self.message}")

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"
