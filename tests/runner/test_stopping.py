"""Stop reasons, the spending caps' arithmetic and the printed resume command (unit tests;
the end-to-end stops run the real CLI in test_stop_and_rerun.py)."""

from __future__ import annotations

import shlex
import signal
from pathlib import Path

from llm_eval.cli.run import RunOptions, resume_command
from llm_eval.runner.runner import RunSummary, WorkItem
from llm_eval.runner.stopping import Budget, Spend, StopReason
from llm_eval.schemas import SingleTurnTask, Usage


def test_signals_exit_like_a_shell_reports_them() -> None:
    assert StopReason.from_signal(signal.SIGINT).exit_code == 130
    assert StopReason.from_signal(signal.SIGTERM).exit_code == 143
    assert StopReason.from_signal(signal.SIGTERM).detail == "SIGTERM"
    assert StopReason.budget("x").exit_code == 4


def test_caps_are_reached_by_the_sum_of_calls() -> None:
    budget, spend = Budget(max_cost_usd=0.3, max_total_tokens=1000), Spend()
    usage = Usage(total_tokens=400, cost_usd=0.1)
    assert budget.charge(spend, usage, simulated=False, model="m") is None
    assert budget.charge(spend, usage, simulated=False, model="m") is None
    why = budget.charge(spend, usage, simulated=False, model="m")
    assert why is not None and "--max-cost $0.3" in why
    assert spend.total_tokens == 1200


def test_a_real_call_of_unknown_cost_stops_a_cost_capped_run() -> None:
    unknown = Usage(total_tokens=10)
    why = Budget(max_cost_usd=1.0).charge(Spend(), unknown, simulated=False, model="m")
    assert why is not None and "cost of model 'm' is unknown" in why
    assert Budget(max_cost_usd=1.0).charge(Spend(), unknown, simulated=True, model="m") is None
    assert Budget(max_total_tokens=99).charge(Spend(), unknown, simulated=False, model="m") is None


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
