"""Agreement with verdicts the scorer was not written against.

The peer set holds the single-number cases of Math-Verify's and lighteval's public test
suites (commits in each line); the realistic set holds responses in the styles real models
write, labelled from those shapes before the scorer's current rules existed.
"""

from __future__ import annotations

import pytest

from tests.support.agreement import PEER, REALISTIC, peer_agreement, realistic_agreement

PEER_FLOOR = 0.95
REALISTIC_FLOOR = 0.97


def test_agreement_with_math_verify_and_lighteval_single_number_cases() -> None:
    agreement = peer_agreement()
    assert agreement.total >= 140, f"only {agreement.total} peer cases in {PEER}"
    assert agreement.share >= PEER_FLOOR, [m["prediction"][-80:] for m in agreement.misses]
    assert set(agreement.group_totals) == {"math-verify", "lighteval"}


@pytest.mark.skipif(not REALISTIC.exists(), reason="no realistic set")
def test_agreement_on_realistic_model_output() -> None:
    agreement = realistic_agreement()
    assert agreement.total >= 300
    assert agreement.share >= REALISTIC_FLOOR, [
        (m["id"], m["shape"], m["method"]) for m in agreement.misses
    ]


SECOND = REALISTIC.with_name("realistic_cases_second.jsonl")
SECOND_FLOOR = 0.94


def test_agreement_on_a_second_realistic_set_written_independently() -> None:
    agreement = realistic_agreement(SECOND)
    assert agreement.total >= 300
    assert agreement.share >= SECOND_FLOOR, [
        (m["id"], m["shape"], m["method"]) for m in agreement.misses
    ]
