"""Stop reasons, the spending caps' arithmetic and the printed resume command (unit tests;
the end-to-end stops run the real CLI in test_stop_and_rerun.py)."""

from __future__ import annotations

import asyncio
import shlex
import signal
from pathlib import Path

import pytest

from llm_eval.cli.run import RunOptions, resume_command
from llm_eval.providers.base import ChatRequest
from llm_eval.runner.budget import Budget, SpendGate
from llm_eval.runner.runner import RunSummary, WorkItem
from llm_eval.runner.stopping import RunStopped, Spend, StopReason
from llm_eval.schemas import ModelConfig, SingleTurnTask, Usage


def test_signals_exit_like_a_shell_reports_them() -> None:
    assert StopReason.from_signal(signal.SIGINT).exit_code == 130
    assert StopReason.from_signal(signal.SIGTERM).exit_code == 143
    assert StopReason.from_signal(signal.SIGTERM).detail == "SIGTERM"
    assert StopReason.budget("x").exit_code == 4


def request(prompt: str = "q", max_tokens: int = 100) -> ChatRequest:
    model = ModelConfig(provider="mock", model="m", input_cost_per_mtok=1000,
                        output_cost_per_mtok=1000)  # fmt: skip
    messages = [{"role": "user", "content": prompt}]
    return ChatRequest("m", model, messages, None, max_tokens, 10.0)


def gate(budget: Budget) -> tuple[SpendGate, list[str]]:
    stops: list[str] = []
    return SpendGate(budget, Spend(), stops.append), stops


def test_caps_are_reached_by_the_sum_of_calls() -> None:
    async def scenario() -> tuple[SpendGate, list[str]]:
        spend_gate, stops = gate(Budget(max_cost_usd=0.3, max_total_tokens=1000))
        for _ in range(3):
            reservation = await spend_gate.reserve(request(), simulated=False)
            spend_gate.settle(reservation, Usage(total_tokens=400, cost_usd=0.1))
        return spend_gate, stops

    spend_gate, stops = asyncio.run(scenario())
    assert len(stops) == 1 and "--max-cost $0.3" in stops[0]
    assert spend_gate.spend.total_tokens == 1200
    assert spend_gate.spend.cost_usd == pytest.approx(0.3)
    stated = spend_gate.stated(stops[0])
    assert "spent $0.3000 and 1,200 tokens" in stated and "200 tokens over the cap" in stated


def test_a_real_call_of_unknown_usage_stops_a_run_capped_on_it() -> None:
    async def stops_of(budget: Budget, usage: Usage, simulated: bool) -> list[str]:
        spend_gate, stops = gate(budget)
        reservation = await spend_gate.reserve(request(), simulated=simulated)
        spend_gate.settle(reservation, usage)
        return stops

    no_cost, no_tokens = Usage(total_tokens=10), Usage(cost_usd=0.0)
    [why] = asyncio.run(stops_of(Budget(max_cost_usd=1.0), no_cost, False))
    assert "cost of model 'm' is unknown" in why
    assert asyncio.run(stops_of(Budget(max_cost_usd=1.0), no_cost, True)) == []
    [why] = asyncio.run(stops_of(Budget(max_total_tokens=99), no_tokens, False))
    assert "--max-total-tokens: model 'm' reported no usable token count" in why


def test_calls_wait_while_calls_in_flight_reserve_the_cap() -> None:
    """Each call reserves its estimate ($0.112 for the first calls): with two in flight at a
    $0.2 cap a third waits; a cheaper real cost frees room for it; the stop that a costly
    reply brings sends a waiting call away unsent."""

    async def scenario() -> None:
        spend_gate, stops = gate(Budget(max_cost_usd=0.2))
        first = await spend_gate.reserve(request(max_tokens=100), simulated=False)
        second = await spend_gate.reserve(request(max_tokens=100), simulated=False)
        third = asyncio.ensure_future(spend_gate.reserve(request(), simulated=False))
        await asyncio.sleep(0)
        assert not third.done()  # $0.224 reserved of $0.2: wait for a call to return
        spend_gate.settle(first, Usage(total_tokens=10, cost_usd=0.05))
        await asyncio.sleep(0)
        assert third.done()  # its real cost left room: sent, at the largest cost seen
        assert third.result().cost_usd == pytest.approx(0.05)
        fourth = asyncio.ensure_future(spend_gate.reserve(request(), simulated=False))
        await asyncio.sleep(0)
        assert not fourth.done()
        spend_gate.settle(second, Usage(total_tokens=10, cost_usd=0.3))  # past the cap
        await asyncio.sleep(0)
        assert stops and isinstance(fourth.exception(), RunStopped)
        assert spend_gate.spend.calls_in_flight_at_cap == 2  # second and third
        spend_gate.settle(third.result(), Usage(total_tokens=10, cost_usd=0.01))
        assert spend_gate.spend.cost_usd == pytest.approx(0.36)

    asyncio.run(scenario())


def test_a_call_cancelled_in_flight_is_counted_apart() -> None:
    async def scenario() -> Spend:
        spend_gate, _stops = gate(Budget(max_cost_usd=1.0))
        spend_gate.cancelled(await spend_gate.reserve(request(), simulated=False))
        spend_gate.release(await spend_gate.reserve(request(), simulated=False))
        return spend_gate.spend

    spend = asyncio.run(scenario())
    assert spend.calls_cancelled == 1 and spend.cost_usd == 0.0


def test_a_stopped_only_wrong_rerun_resumes_the_tasks_it_did_not_finish() -> None:
    options = RunOptions(
        models=["m"], benchmarks=["sample_math"], only_wrong=Path("scored.jsonl"),
        overrides={"max_cost_usd": 0.5, "global_limit": None}, cache=False,
    )  # fmt: skip
    task = SingleTurnTask(id="math 007", task_type="single_turn", question="q", answer="1")
    summary = RunSummary(Path("t.jsonl"), "run")
    summary.pending = [WorkItem("m", "sample_math", task, 0), WorkItem("m", "sample_math", task, 1)]
    argv = shlex.split(resume_command(options, Path("out dir/t.jsonl"), summary))
    assert argv[:2] == ["llm-eval", "run"] and argv[-1] == "--resume"
    assert argv.count("--task-id") == 1 and argv[argv.index("--task-id") + 1] == "math 007"
    assert "--only-wrong" not in argv and "--no-cache" in argv
    assert argv[argv.index("--max-cost") + 1] == "0.5"
    assert argv[argv.index("--output") + 1] == "out dir/t.jsonl"
