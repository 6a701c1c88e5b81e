"""Markdown reports from scored trace rows; tables are tidy pandas DataFrames.

Importing this package is cheap: pandas loads only when a report is rendered.
"""

from llm_eval.reporting.markdown import render_report

__all__ = ["render_report"]
