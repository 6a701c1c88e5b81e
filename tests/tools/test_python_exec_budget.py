"""All python_exec sandboxes together stay within one memory budget (`memory_budget_mb`)."""

from __future__ import annotations

import asyncio
import os
import uuid
from pathlib import Path

import pytest

from llm_eval.config.validation import validate
from llm_eval.schemas import ToolCallRecord, TraceRow
from llm_eval.tools.python_exec import MemoryBudget, PythonExecConfig, PythonExecLimits, run_python
from tests.support.rows import make_row

pytestmark = pytest.mark.timeout(120)

# Each call holds most of its cap in written (resident) memory for a moment.
HOLD = """
import time
open('/proc/self/comm', 'w').write({marker!r})
block = b'\\x01' * ({hold_mb} << 20)
time.sleep({hold_s})
print('HELD', flush=True)
"""


def _resident_mb(comm: str) -> float:
    """Resident memory of every process named `comm`, together, in MB."""
    total_kb = 0
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "comm").read_text().strip() == comm:
                for line in (entry / "status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        total_kb += int(line.split()[1])
        except (OSError, ValueError):
            continue
    return total_kb / 1024


async def _peak_together(budget: MemoryBudget, calls: int, limits: PythonExecLimits) -> float:
    """Run `calls` holding calls at once under `budget`; the peak of their summed memory."""
    marker = "mb" + uuid.uuid4().hex[:12]
    code = HOLD.format(marker=marker, hold_mb=limits.memory_mb * 3 // 4, hold_s=1.0)
    running = asyncio.gather(*(run_python(code, limits, budget) for _ in range(calls)))
    peak = 0.0
    while not running.done():
        peak = max(peak, _resident_mb(marker))
        await asyncio.sleep(0.02)
    results = await running
    assert [r.stdout for r in results] == ["HELD\n"] * calls, [r.stderr for r in results]
    return peak


async def test_eight_calls_in_flight_stay_within_the_budget_and_waits_are_counted() -> None:
    limits = PythonExecLimits(timeout_s=60.0, cpu_seconds=30, memory_mb=256)
    # Control: with room for all eight, the same calls hold far more than 512 MB together,
    # so the measurement below can see a budget that does not hold.
    assert await _peak_together(MemoryBudget(8 * 256), 8, limits) > 600

    budget = MemoryBudget(512)
    peak = await _peak_together(budget, 8, limits)
    assert peak <= 512, f"{peak:.0f} MB held at once"
    # Two fit at once: the other six waited, and each result says how long.
    assert budget.waited_calls == 6 and budget.waited_s > 0
    assert budget.in_use_mb == 0


async def test_each_result_reports_its_wait_for_the_budget() -> None:
    limits = PythonExecLimits(timeout_s=30.0, memory_mb=256)
    budget = MemoryBudget(256)
    code = "import time\ntime.sleep(0.5)\nprint('done')"
    results = await asyncio.gather(*(run_python(code, limits, budget) for _ in range(3)))
    waits = sorted(result.budget_wait_s for result in results)
    assert waits[0] == 0.0 and waits[1] > 0 and waits[2] > waits[1], waits
    assert all("memory_budget" in result.isolation for result in results)


async def test_reservations_come_in_arrival_order_and_a_cancelled_wait_takes_nothing() -> None:
    budget = MemoryBudget(100)
    order: list[str] = []

    async def hold(name: str, mb: int, release: asyncio.Event) -> None:
        async with budget.reserve(mb):
            order.append(name)
            await release.wait()

    first, big, small = asyncio.Event(), asyncio.Event(), asyncio.Event()
    tasks = [asyncio.create_task(hold("first", 60, first))]
    await asyncio.sleep(0)
    tasks.append(asyncio.create_task(hold("big", 100, big)))
    await asyncio.sleep(0)
    cancelled = asyncio.create_task(hold("cancelled", 10, asyncio.Event()))
    tasks.append(asyncio.create_task(hold("small", 30, small)))
    await asyncio.sleep(0.01)
    # 40 MB are free, yet "small" waits behind "big", which came first.
    assert order == ["first"] and budget.in_use_mb == 60
    cancelled.cancel()
    await asyncio.gather(cancelled, return_exceptions=True)
    first.set()
    await asyncio.sleep(0.01)
    assert order == ["first", "big"] and budget.in_use_mb == 100
    big.set()
    small.set()
    await asyncio.gather(*tasks)
    assert order == ["first", "big", "small"] and budget.in_use_mb == 0
    assert budget.waited_calls == 2


async def test_a_call_larger_than_the_budget_is_refused() -> None:
    with pytest.raises(ValueError, match="memory_budget_mb"):
        async with MemoryBudget(100).reserve(200):
            pass


def test_a_budget_smaller_than_one_call_is_a_config_error_at_its_line(config_copy: Path) -> None:
    tools = config_copy / "configs" / "tools.yaml"
    text = tools.read_text()
    tools.write_text(text.replace("    memory_budget_mb: null\n", "    memory_budget_mb: 512\n"))
    line = tools.read_text().splitlines().index("    memory_budget_mb: 512") + 1
    problems = [str(problem) for problem in validate(str(config_copy)).problems]
    assert any(
        p.startswith(f"{tools}:{line}: tools.python_exec.memory_budget_mb:")
        and "memory_budget_mb (512 MB) is less than memory_mb (1024 MB)" in p
        for p in problems
    ), problems


def test_the_default_budget_is_half_of_the_machine_s_memory() -> None:
    machine_mb = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // (1 << 20)
    PythonExecConfig(memory_mb=machine_mb // 2)
    with pytest.raises(ValueError, match="by default half of this machine's memory"):
        PythonExecConfig(memory_mb=machine_mb // 2 + 1)


def test_the_report_says_when_tool_calls_waited_for_the_budget() -> None:
    from llm_eval.reporting import render_report

    def row(task_id: str, *waits: float | None) -> TraceRow:
        calls = [
            ToolCallRecord(id=f"c{i}", name="python_exec", arguments="{}", result="4",
                           budget_wait_s=wait)
            for i, wait in enumerate(waits)
        ]  # fmt: skip
        return make_row(model="m", benchmark="sample_tools", task_id=task_id,
                        task_type="tool_calling", tool_calls=calls)  # fmt: skip

    quiet = render_report([row("t1", 0.0, None)], title="t")
    assert "memory budget" not in quiet
    waited = render_report([row("t1", 0.0, 1.25), row("t2", 2.0)], title="t")
    assert (
        "2 tool calls waited for room in the sandboxes' shared memory budget "
        "(`memory_budget_mb`), 3.2 s in all." in waited
    )
