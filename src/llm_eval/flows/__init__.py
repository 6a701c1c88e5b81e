"""Flows build the messages of a task and drive the model calls it needs."""

from llm_eval.flows.base import Flow, FlowContext, FlowResult
from llm_eval.flows.multi_turn import multi_round_flow, multi_turn_flow
from llm_eval.flows.single_turn import single_turn_flow
from llm_eval.flows.tool_loop import tool_loop_flow

FLOWS: dict[str, Flow] = {
    "single_turn": single_turn_flow,
    "multi_turn": multi_turn_flow,
    "multi_round": multi_round_flow,
    "tool_loop": tool_loop_flow,
}

__all__ = ["FLOWS", "Flow", "FlowContext", "FlowResult"]
