"""The run's progress bar: per model, done / total, rate, time left, retries in flight,
failed calls as they happen and error rows (a Rich console recording what it drew)."""

from __future__ import annotations

import io

from rich.console import Console

from llm_eval.cli.progress import RichProgress


def drawn(progress: RichProgress) -> str:
    """The bars as the console would show them now."""
    progress.progress.refresh()
    console = progress.progress.console
    return console.export_text(clear=False) if console.record else ""


def a_progress() -> RichProgress:
    console = Console(file=io.StringIO(), record=True, width=160, force_terminal=False)
    return RichProgress(console=console)


def test_each_model_shows_done_total_rate_time_left_retrying_failed_calls_and_error_rows() -> None:
    progress = a_progress()
    progress.start({"alpha": 10, "beta": 4})
    progress.retried("alpha", "t1")  # t1's first call failed; it is being retried
    progress.retried("alpha", "t2")
    progress.retried("alpha", "t2")  # t2 failed twice: still one task retrying
    progress.row_done("alpha", "correct", "t1")  # t1 got through on its retry
    progress.row_done("alpha", "error", "t3")  # t3 gave up
    progress.row_done("beta", "correct", "u1")
    progress.stop()
    text = drawn(progress)
    alpha = next(line for line in text.splitlines() if line.startswith("alpha"))
    assert "2/10" in alpha
    assert "retrying 1" in alpha  # t2 only
    assert "failed calls 3" in alpha  # every failed attempt, as it happened
    assert "error rows 1" in alpha
    assert "/s" in alpha and "left" in alpha
    beta = next(line for line in text.splitlines() if line.startswith("beta"))
    assert "1/4" in beta and "retrying 0" in beta and "error rows 0" in beta


def test_the_old_two_argument_events_still_count() -> None:
    progress = a_progress()
    progress.start({"alpha": 2})
    progress.retried("alpha")
    progress.row_done("alpha", "error")
    progress.stop()
    alpha = next(line for line in drawn(progress).splitlines() if line.startswith("alpha"))
    assert "failed calls 1" in alpha and "error rows 1" in alpha and "1/2" in alpha
