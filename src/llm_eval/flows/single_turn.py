"""One question, one answer."""

from __future__ import annotations

from llm_eval.flows.base import FlowContext, FlowResult, opening_messages
from llm_eval.flows.registry import register_flow
from llm_eval.schemas import Task


@register_flow("single_turn")
async def single_turn_flow(task: Task, ctx: FlowContext) -> FlowResult:
    """Send the system prompt and the question; score the reply."""
    messages = opening_messages(ctx.prompt, getattr(task, "question", ""))
    reply = await ctx.call(messages, None)
    messages.append(reply.assistant_message())
    return FlowResult(messages, reply.content, reply.reasoning)
