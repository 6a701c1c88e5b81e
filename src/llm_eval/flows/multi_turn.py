"""Conversations: the task's turns as given, and multi-round prompting with follow-ups."""

from __future__ import annotations

from llm_eval.flows.base import FlowContext, FlowResult, with_system
from llm_eval.flows.registry import register_flow
from llm_eval.schemas import MultiTurnTask, Task


def _turns(task: Task) -> list[dict[str, str]]:
    if not isinstance(task, MultiTurnTask):
        raise TypeError(f"task {task.id!r} is not a multi_turn task")
    return [turn.model_dump() for turn in task.turns]


@register_flow("multi_turn")
async def multi_turn_flow(task: Task, ctx: FlowContext) -> FlowResult:
    """Send the conversation so far; score the reply to its last user turn."""
    messages = with_system(ctx.prompt, _turns(task))
    reply = await ctx.call(messages, None)
    messages.append(reply.assistant_message())
    return FlowResult(messages, reply.content, reply.reasoning)


@register_flow("multi_round")
async def multi_round_flow(task: Task, ctx: FlowContext) -> FlowResult:
    """Answer, then answer each follow-up of the prompt in turn; score the last reply."""
    messages = with_system(ctx.prompt, _turns(task))
    reasoning: list[str] = []
    reply = None
    for followup in [None, *ctx.prompt.followups]:
        if followup is not None:
            messages.append({"role": "user", "content": followup})
        reply = await ctx.call(messages, None)
        messages.append(reply.assistant_message())
        if reply.reasoning:
            reasoning.append(reply.reasoning)
    assert reply is not None
    return FlowResult(messages, reply.content, "\n\n".join(reasoning) or None)
