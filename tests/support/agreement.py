"""Agreement of the scorer with labelled verdicts it was not written against.

Sets in `tests/scoring/`:
- `realistic_cases.jsonl`, `realistic_cases_second.jsonl`: responses in the styles real models
  write (reasoning ending in a box, echoes of the passage, answers beside decoys, hedges,
  courtesy lines, titles, units, fractions), each with the verdict a careful grader gives;
- `explained_cases.jsonl`: replies that explain themselves (reasons naming decoys, negations,
  "changed from" clauses, breakdowns of amounts), math hedges, cut-off replies
  (`finish_reason: length`), checks after the answer and unusual notations, written and
  labelled by graders who never saw the scorer, and labelled again blind by a second grader;
- `peer_cases.jsonl`: the single-number cases of Math-Verify's and lighteval's public test
  suites (gold, prediction, expected), converted as they are.

    uv run python -m tests.support.agreement          # print every figure and the misses
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from llm_eval.scoring import score_text
from llm_eval.scoring.numeric import expected_value

CASES = Path(__file__).resolve().parents[1] / "scoring"
REALISTIC = CASES / "realistic_cases.jsonl"
SECOND = CASES / "realistic_cases_second.jsonl"
EXPLAINED = CASES / "explained_cases.jsonl"
PEER = CASES / "peer_cases.jsonl"


@dataclass
class Agreement:
    """How often the scorer's verdict equals the labelled one, and where it does not."""

    agreed: int = 0
    total: int = 0
    skipped: int = 0
    by_group: Counter[str] = field(default_factory=Counter)
    group_totals: Counter[str] = field(default_factory=Counter)
    misses: list[dict[str, Any]] = field(default_factory=list)
    right: int = 0
    """Cases labelled right."""
    right_credited: int = 0
    """Cases labelled right that the scorer credits (recall's numerator)."""
    wrong: int = 0
    """Cases labelled wrong."""
    wrong_credited: int = 0
    """Cases labelled wrong that the scorer credits anyway."""

    @property
    def share(self) -> float:
        return self.agreed / self.total if self.total else 0.0

    @property
    def recall(self) -> float:
        """The share of right answers the scorer credits."""
        return self.right_credited / self.right if self.right else 0.0

    @property
    def false_credit(self) -> float:
        """The share of wrong answers the scorer credits."""
        return self.wrong_credited / self.wrong if self.wrong else 0.0

    def add(
        self, group: str, agreed: bool, case: dict[str, Any], label: bool | None = None
    ) -> None:
        self.total += 1
        self.group_totals[group] += 1
        if label is not None:
            credited = agreed == label
            if label:
                self.right, self.right_credited = self.right + 1, self.right_credited + credited
            else:
                self.wrong, self.wrong_credited = self.wrong + 1, self.wrong_credited + credited
        if agreed:
            self.agreed += 1
            self.by_group[group] += 1
        else:
            self.misses.append(case)


def load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def realistic_agreement(path: Path = REALISTIC) -> Agreement:
    result = Agreement()
    for case in load(path):
        verdict = score_text(
            case["response"],
            case["answer"],
            kind=case["kind"],
            answer_regex=case.get("answer_regex"),
            accepted_answers=case.get("accepted_answers", ()),
            distractors=case.get("distractors", ()),
            question=case.get("question"),
            answer_script=case.get("answer_script"),
            answer_format=case.get("answer_format"),
            truncated=case.get("finish_reason") == "length",
        )
        case = {**case, "got": verdict.correct, "method": verdict.method}
        result.add(case["shape"], verdict.correct == case["correct"], case, case["correct"])
    return result


def gold_answer(gold: str) -> str | None:
    """A peer case's gold as the plain number our task files would hold, or None."""
    text = gold.strip().strip("$").strip()
    if text.startswith("\\boxed{") and text.endswith("}"):
        text = text[len("\\boxed{") : -1]
    value = expected_value(text)
    if value is None:
        return None
    return (
        str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"
    )


def peer_agreement(path: Path = PEER) -> Agreement:
    result = Agreement()
    for case in load(path):
        answer = gold_answer(case["gold"])
        if answer is None:
            result.skipped += 1
            continue
        verdict = score_text(case["prediction"], answer, kind="numeric")
        case = {**case, "answer": answer, "got": verdict.correct, "method": verdict.method}
        result.add(case["source"], verdict.correct == case["expected"], case, case["expected"])
    return result


def _print(name: str, agreement: Agreement) -> None:
    skipped = f" ({agreement.skipped} skipped: gold is not one number)" if agreement.skipped else ""
    print(f"{name}: {agreement.agreed}/{agreement.total} = {agreement.share:.3f}{skipped}; "
          f"recall on right answers {agreement.recall:.3f}, "
          f"wrong answers credited {agreement.false_credit:.3f}")  # fmt: skip
    for group in sorted(agreement.group_totals):
        print(f"  {group}: {agreement.by_group[group]}/{agreement.group_totals[group]}")
    for miss in agreement.misses:
        shown = {k: miss.get(k) for k in ("id", "note", "answer", "gold", "expected", "correct",
                                           "got", "method")}  # fmt: skip
        response = str(miss.get("response") or miss.get("prediction"))[-160:]
        print(f"  MISS {json.dumps(shown, ensure_ascii=False)} … {response!r}")


if __name__ == "__main__":
    _print("realistic set", realistic_agreement())
    _print("second realistic set", realistic_agreement(SECOND))
    _print("explained replies", realistic_agreement(EXPLAINED))
    _print("peer suites", peer_agreement())
