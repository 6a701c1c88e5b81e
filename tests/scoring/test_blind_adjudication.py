"""A fresh reader's decisions on the held-back sets' disagreements are kept and applied.

After each set's first blind measurement, a reader who saw neither the label nor the scorer's
verdict decided every sure disagreement; the set's label must say what that reader decided.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

HERE = Path(__file__).parent


def _lines(path: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


@pytest.mark.parametrize("round_", [5, 6, 7, 8, 9, 10, 11, 12, 13])
def test_every_adjudicated_row_carries_the_reader_s_decision(round_: int) -> None:
    labels = {row["id"]: row["label"] for row in _lines(HERE / f"blind_round{round_}.jsonl")}
    decisions = _lines(HERE / f"blind_round{round_}_adjudicated.jsonl")
    assert decisions, "no decisions kept"
    for decision in decisions:
        assert decision["decision"] in {"correct", "incorrect", "ambiguous"}
        assert decision["why"].strip(), decision["id"]
        assert labels[decision["id"]] == decision["decision"], decision["id"]
