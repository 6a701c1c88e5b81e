"""Local tools the model may call, behind one registry."""

from llm_eval.tools.registry import ToolOutcome, ToolRegistry, register_tool, registered_tool_names

__all__ = ["ToolOutcome", "ToolRegistry", "register_tool", "registered_tool_names"]
