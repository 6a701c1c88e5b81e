"""Flows build the messages of a task and drive the model calls it needs.

The flows themselves (`single_turn`, `multi_turn`, `tool_loop`, and any module added to this
folder) are imported by `FLOWS` when it is first read, not here.
"""

from llm_eval.flows.base import Flow, FlowContext, FlowResult
from llm_eval.flows.registry import FLOWS, flow_names, register_flow

__all__ = ["FLOWS", "Flow", "FlowContext", "FlowResult", "flow_names", "register_flow"]
