"""llm-eval: a deterministic, async evaluation harness for language models."""

__version__ = "0.1.0"
