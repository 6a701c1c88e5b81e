"""Live trace logging: rows handed to a child process during the run become MLflow traces."""

from __future__ import annotations

import io
import time

import pytest

from llm_eval.tracking import live


def test_batches_are_full_or_flushed_after_a_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(live, "BATCH_ROWS", 3)
    lines = io.StringIO("".join(f'{{"n": {i}}}\n' for i in range(7)))
    sizes = [len(batch) for batch in live.batches(lines)]
    assert sizes == [3, 3, 1]


def test_a_partial_batch_is_written_after_the_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(live, "BATCH_WAIT_S", 0.2)

    class Slow(io.StringIO):
        def __iter__(self):  # type: ignore[override]
            yield '{"n": 1}\n'
            time.sleep(0.6)  # longer than the wait: the first row goes out alone
            yield '{"n": 2}\n'

    started = time.monotonic()
    seen = []
    for batch in live.batches(Slow()):
        seen.append((len(batch), time.monotonic() - started))
    assert [size for size, _ in seen] == [1, 1]
    assert seen[0][1] < 0.5
