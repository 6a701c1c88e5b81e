"""Flows build the messages of a task and drive the model calls it needs."""

from llm_eval.flows import multi_turn, single_turn, tool_loop  # noqa: F401  (register)
from llm_eval.flows.base import Flow, FlowContext, FlowResult
from llm_eval.flows.registry import FLOWS, flow_names, register_flow

__all__ = ["FLOWS", "Flow", "FlowContext", "FlowResult", "flow_names", "register_flow"]
