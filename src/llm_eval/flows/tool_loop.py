"""The tool-calling loop: model -> tool calls -> tool results -> model, for bounded rounds."""

from __future__ import annotations

from llm_eval.flows.base import FlowContext, FlowResult, opening_messages
from llm_eval.flows.registry import register_flow
from llm_eval.schemas import Task, ToolCallRecord

FINAL_NUDGE = "You have used every tool round. Give your final answer now, without tools."


@register_flow("tool_loop")
async def tool_loop_flow(task: Task, ctx: FlowContext) -> FlowResult:
    """Let the model call tools until it answers in text or runs out of rounds."""
    messages = opening_messages(ctx.prompt, getattr(task, "question", ""))
    schemas = ctx.tools.schemas(ctx.tool_names) or None
    records: list[ToolCallRecord] = []
    reasoning: list[str] = []
    for _ in range(ctx.max_tool_rounds):
        reply = await ctx.call(messages, schemas)
        messages.append(reply.assistant_message())
        if reply.reasoning:
            reasoning.append(reply.reasoning)
        if not reply.tool_calls:
            return FlowResult(messages, reply.content, "\n\n".join(reasoning) or None, records)
        for call in reply.tool_calls:
            record = await ctx.tools.execute(
                call.id, call.name, call.arguments, offered=ctx.tool_names
            )
            records.append(record)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": record.result})
    # Out of rounds: one last call without tools, so the row still has an answer to score.
    messages.append({"role": "user", "content": FINAL_NUDGE})
    reply = await ctx.call(messages, None)
    messages.append(reply.assistant_message())
    return FlowResult(messages, reply.content, "\n\n".join(reasoning) or None, records)
