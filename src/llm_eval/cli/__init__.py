"""The `llm-eval` command line: one module per command, imported only when it runs."""

from llm_eval.cli.app import app, main

__all__ = ["app", "main"]
