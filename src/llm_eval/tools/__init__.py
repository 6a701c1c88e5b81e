"""Local tools the model may call, behind one registry."""

from llm_eval.tools.registry import ToolRegistry, registered_tool_names

__all__ = ["ToolRegistry", "registered_tool_names"]
