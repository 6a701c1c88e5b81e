"""Each flow builds the right messages and drives the model as often as it should."""

from __future__ import annotations

import json
from typing import Any

import pytest

from llm_eval.flows import FLOWS, FlowContext, flow_names, register_flow
from llm_eval.flows.tool_loop import FINAL_NUDGE
from llm_eval.providers.base import ChatResponse, ToolCall
from llm_eval.schemas import (
    Message,
    MultiTurnTask,
    PromptConfig,
    SingleTurnTask,
    ToolCallingTask,
    ToolConfig,
)
from llm_eval.tools.registry import ToolRegistry


class Model:
    """Replies from a queue and records every (messages, tools) it was sent."""

    def __init__(self, *replies: ChatResponse) -> None:
        self.replies = list(replies)
        self.sent: list[tuple[list[dict[str, Any]], list[dict[str, Any]] | None]] = []

    async def __call__(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> ChatResponse:
        self.sent.append(([dict(m) for m in messages], tools))
        return self.replies.pop(0)


def context(model: Model, prompt: PromptConfig, rounds: int = 3) -> FlowContext:
    tools = ToolRegistry({"python_exec": ToolConfig(timeout_s=20)})
    return FlowContext(model, prompt, tools, ["python_exec"], rounds)


def python_call(code: str) -> ChatResponse:
    arguments = json.dumps({"code": code})
    return ChatResponse(content="", tool_calls=[ToolCall("c1", "python_exec", arguments)])


async def test_single_turn_sends_system_and_templated_question() -> None:
    model = Model(ChatResponse(content="Final answer: 4"))
    prompt = PromptConfig(system="Be brief.", user_template="Q: {question}")
    task = SingleTurnTask(id="t", task_type="single_turn", question="2+2?", answer="4")
    result = await FLOWS["single_turn"](task, context(model, prompt))
    assert model.sent[0][0] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Q: 2+2?"},
    ]
    assert result.response == "Final answer: 4"
    assert result.messages[-1] == {"role": "assistant", "content": "Final answer: 4"}


async def test_multi_turn_keeps_a_task_system_turn_and_answers_the_last_user_turn() -> None:
    model = Model(ChatResponse(content="blue"))
    turns = [
        Message(role="system", content="Task system."),
        Message(role="user", content="My car is red."),
        Message(role="assistant", content="Noted."),
        Message(role="user", content="I painted it blue. Colour?"),
    ]
    task = MultiTurnTask(id="t", task_type="multi_turn", turns=turns, answer="blue")
    await FLOWS["multi_turn"](task, context(model, PromptConfig(system="Prompt system.")))
    sent = model.sent[0][0]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert sent[0]["content"] == "Task system."  # the task's own system turn is not doubled


async def test_multi_round_sends_each_followup_and_scores_the_last_reply() -> None:
    model = Model(*(ChatResponse(content=f"reply {i}") for i in range(3)))
    prompt = PromptConfig(system="S", followups=["Re-check.", "Box it."])
    turns = [Message(role="user", content="Solve.")]
    task = MultiTurnTask(id="t", task_type="multi_turn", turns=turns, answer="1")
    result = await FLOWS["multi_round"](task, context(model, prompt))
    assert len(model.sent) == 3
    assert model.sent[2][0][-1] == {"role": "user", "content": "Box it."}
    assert result.response == "reply 2"


async def test_tool_loop_runs_the_tool_and_returns_its_output_to_the_model() -> None:
    model = Model(python_call("print(6 * 7)"), ChatResponse(content="Final answer: 42"))
    task = ToolCallingTask(id="t", task_type="tool_calling", question="6*7?", answer="42")
    result = await FLOWS["tool_loop"](task, context(model, PromptConfig()))
    tool_message = model.sent[1][0][-1]
    assert tool_message["role"] == "tool" and tool_message["content"].strip().startswith("42")
    assert model.sent[0][1] and model.sent[0][1][0]["function"]["name"] == "python_exec"
    assert result.response == "Final answer: 42" and result.tool_calls[0].name == "python_exec"


async def test_tool_loop_out_of_rounds_asks_for_a_final_answer_without_tools() -> None:
    model = Model(python_call("print(1)"), python_call("print(2)"), ChatResponse(content="2"))
    task = ToolCallingTask(id="t", task_type="tool_calling", question="?", answer="2")
    result = await FLOWS["tool_loop"](task, context(model, PromptConfig(), rounds=2))
    assert model.sent[-1][1] is None
    assert model.sent[-1][0][-1] == {"role": "user", "content": FINAL_NUDGE}
    assert result.response == "2" and len(result.tool_calls) == 2


def test_a_new_flow_is_one_registered_function() -> None:
    @register_flow("echo_question")
    async def echo(task: object, ctx: FlowContext) -> object:  # pragma: no cover - not run
        raise NotImplementedError

    try:
        assert "echo_question" in flow_names()
    finally:
        del FLOWS["echo_question"]
    assert "echo_question" not in flow_names()


@pytest.mark.parametrize("name", ["single_turn", "multi_turn", "multi_round", "tool_loop"])
def test_built_in_flows_are_registered(name: str) -> None:
    assert name in flow_names()
