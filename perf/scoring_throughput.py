"""Measure how many responses per second the scorers handle on one core.

Cycles over the labelled set (tests/scoring/scoring_cases.jsonl, all three kinds) in three regimes:
  * warm: answers and repeated responses hit the normalisation caches, as when rescoring
    several models on the same tasks;
  * cold: every cache is cleared before each response, the worst case;
  * long: each response carries a few kilobytes of reasoning (a `<think>` block, then the
    same worked solution in the visible reply), like hard-math replies; caches cold.

    uv run python perf/scoring_throughput.py               # about 2 CPU s per regime
    uv run python perf/scoring_throughput.py --seconds 5
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from llm_eval.scoring import (  # noqa: E402
    commitment,
    cues,
    extraction,
    forms,
    matchers,
    normalize,
    numeric,
    score_text,
    sentences,
)

CASES = REPO / "tests" / "scoring" / "scoring_cases.jsonl"
TARGET_PER_SECOND = 5_000
REASONING = (
    "Let me work through this carefully. First I read the message again and note every "
    "name, date and number: 3 items, 14/3, 10:30, 2 people, 64,90 €. Then I check which "
    "of them the question asks about and rule out the others one by one. "
) * 12


def load_cases() -> list[dict[str, Any]]:
    with CASES.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def with_reasoning(case: dict[str, Any]) -> dict[str, Any]:
    """The same case with kilobytes of hidden and visible reasoning before the answer."""
    response = f"<think>{REASONING}</think>\n{REASONING}\n\n{case['response']}"
    return case | {"response": response}


_CACHED = [
    value
    for module in (normalize, matchers, commitment, cues, extraction, forms, numeric, sentences)
    for value in vars(module).values()
    if hasattr(value, "cache_clear")
]


def clear_caches() -> None:
    """Forget every normalised answer and token, as if each response were the first."""
    for cached in _CACHED:
        cached.cache_clear()


def measure(cases: list[dict[str, Any]], seconds: float, before: Callable[[], None]) -> float:
    """Responses scored per second of this process's CPU time, over about `seconds` of it.

    CPU time, not wall time: on a shared machine another process's load would otherwise be
    counted as the scorer's cost, and "per core" is what the target means.
    """
    scored = 0
    start = time.process_time()
    while time.process_time() - start < seconds:
        for case in cases:
            before()
            score_text(
                case["response"],
                case["answer"],
                answer_regex=case["answer_regex"],
                kind=case["kind"],
            )
        scored += len(cases)
    return scored / (time.process_time() - start)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="CPU seconds per regime")
    args = parser.parse_args()
    cases = load_cases()
    kinds = sorted({case["kind"] for case in cases})
    print(f"{len(cases)} labelled responses, kinds: {', '.join(kinds)}; one core")
    long_cases = [with_reasoning(case) for case in cases]
    sizes = sorted(len(case["response"].encode()) for case in long_cases)
    print(
        f"long replies: {sizes[0] / 1000:.1f}-{sizes[-1] / 1000:.1f} KB of working, then the answer"
    )
    rates = {
        "warm": measure(cases, args.seconds, lambda: None),
        "cold": measure(cases, args.seconds, clear_caches),
        "long": measure(long_cases, args.seconds, clear_caches),
    }
    for regime, rate in rates.items():
        print(f"  {regime:<5} {rate:10,.0f} responses/s")
    slowest = min(rates.values())
    verdict = "OK" if slowest >= TARGET_PER_SECOND else "BELOW TARGET"
    print(f"slowest regime {slowest:,.0f}/s vs target {TARGET_PER_SECOND:,}/s: {verdict}")
    return 0 if slowest >= TARGET_PER_SECOND else 1


if __name__ == "__main__":
    raise SystemExit(main())
