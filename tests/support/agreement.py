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

- `scoring_cases.jsonl`: the first hand-labelled set, short replies of all three kinds;
- `verdict_classes.jsonl`: the reply classes a rule cannot always settle (self-corrections,
  appositives, decoys inside descriptions, ordinals, inflected names, conditions, ranges,
  several answers, other languages, paraphrases, gaming), each labelled with the grader's
  verdict (`correct`) and the verdict the scorer should give (`expected_verdict`, unsure
  included) before the rule for its class was written.

Verdicts are correct, incorrect or unsure. Agreement is measured among sure verdicts; wrong
credited is the share of replies labelled wrong that are credited, right refused the share of
replies labelled right that are surely refused, unsure the share of rows left unsure.

    uv run python -m tests.support.agreement          # print every figure, misses, unsure rows
    uv run python -m tests.support.agreement --table  # docs/scoring.md's table, by set and class
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Callable
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
LABELLED = CASES / "scoring_cases.jsonl"
CLASSES = CASES / "verdict_classes.jsonl"


@dataclass
class Tally:
    """Verdicts against labels for one set or one class of it (three verdicts, two labels)."""

    rows: int = 0
    sure: int = 0
    """Rows the scorer was sure about (correct or incorrect)."""
    sure_agreed: int = 0
    """Sure verdicts equal to the label."""
    unsure: int = 0
    right: int = 0
    """Rows labelled right."""
    right_credited: int = 0
    right_refused: int = 0
    """Rows labelled right that the scorer surely refused."""
    wrong: int = 0
    """Rows labelled wrong."""
    wrong_credited: int = 0
    """Rows labelled wrong that the scorer credited anyway."""

    def add(self, verdict: str, label: bool) -> None:
        self.rows += 1
        if verdict == "unsure":
            self.unsure += 1
        else:
            self.sure += 1
            self.sure_agreed += (verdict == "correct") == label
        if label:
            self.right += 1
            self.right_credited += verdict == "correct"
            self.right_refused += verdict == "incorrect"
        else:
            self.wrong += 1
            self.wrong_credited += verdict == "correct"

    @property
    def sure_agreement(self) -> float:
        """Among sure verdicts, the share that equals the label."""
        return self.sure_agreed / self.sure if self.sure else 1.0

    @property
    def wrong_credited_share(self) -> float:
        return self.wrong_credited / self.wrong if self.wrong else 0.0

    @property
    def right_refused_share(self) -> float:
        return self.right_refused / self.right if self.right else 0.0

    @property
    def unsure_share(self) -> float:
        return self.unsure / self.rows if self.rows else 0.0

    def row(self, name: str) -> str:
        """One Markdown table row: name, rows, sure agreement, wrong credited, right
        refused, unsure."""
        return (f"| {name} | {self.rows} | {self.sure_agreement:.3f} | "
                f"{self.wrong_credited_share:.1%} | {self.right_refused_share:.1%} | "
                f"{self.unsure_share:.1%} |")  # fmt: skip


@dataclass
class Agreement:
    """How the scorer's verdicts compare with labelled ones, for the set and by class.

    `share` is the agreement among sure verdicts; an unsure verdict is neither agreement nor
    disagreement, and is counted apart (`unsure_share`). `misses` are the sure verdicts
    that differ from the label; `unsure_cases` the rows left unsure.
    """

    total: int = 0
    skipped: int = 0
    overall: Tally = field(default_factory=Tally)
    by_shape: dict[str, Tally] = field(default_factory=dict)
    misses: list[dict[str, Any]] = field(default_factory=list)
    unsure_cases: list[dict[str, Any]] = field(default_factory=list)

    @property
    def agreed(self) -> int:
        return self.overall.sure_agreed

    @property
    def share(self) -> float:
        return self.overall.sure_agreement

    @property
    def recall(self) -> float:
        """The share of right answers the scorer credits."""
        tally = self.overall
        return tally.right_credited / tally.right if tally.right else 0.0

    @property
    def false_credit(self) -> float:
        """The share of wrong answers the scorer credits."""
        return self.overall.wrong_credited_share

    @property
    def unsure_share(self) -> float:
        return self.overall.unsure_share

    @property
    def by_group(self) -> Counter[str]:
        """Sure verdicts equal to the label, by class."""
        return Counter({shape: tally.sure_agreed for shape, tally in self.by_shape.items()})

    @property
    def group_totals(self) -> Counter[str]:
        """Sure verdicts, by class."""
        return Counter({shape: tally.sure for shape, tally in self.by_shape.items()})

    def add(self, group: str, verdict: str, label: bool, case: dict[str, Any]) -> None:
        self.total += 1
        self.overall.add(verdict, label)
        self.by_shape.setdefault(group, Tally()).add(verdict, label)
        if verdict == "unsure":
            self.unsure_cases.append(case)
        elif (verdict == "correct") != label:
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
        case = {**case, "got": verdict.verdict, "method": verdict.method,
                "reason": verdict.unsure_reason}  # fmt: skip
        result.add(case["shape"], verdict.verdict, case["correct"], case)
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
        case = {**case, "answer": answer, "got": verdict.verdict, "method": verdict.method}
        result.add(case["source"], verdict.verdict, case["expected"], case)
    return result


def labelled_agreement(path: Path = LABELLED) -> Agreement:
    """The first hand-labelled set (`scoring_cases.jsonl`), by scorer kind."""
    result = Agreement()
    for case in load(path):
        verdict = score_text(
            case["response"], case["answer"], answer_regex=case["answer_regex"], kind=case["kind"]
        )
        case = {**case, "got": verdict.verdict, "method": verdict.method,
                "reason": verdict.unsure_reason, "correct": case["expected"]}  # fmt: skip
        result.add(case["kind"], verdict.verdict, case["expected"], case)
    return result


def verdict_misses(path: Path = CLASSES) -> list[dict[str, Any]]:
    """The cases of `verdict_classes.jsonl` whose verdict is not the expected one."""
    misses = []
    for case in load(path):
        result = score_text(
            case["response"], case["answer"], kind=case["kind"],
            accepted_answers=case.get("accepted_answers", ()),
            distractors=case.get("distractors", ()), question=case.get("question"),
            answer_script=case.get("answer_script"),
            truncated=case.get("finish_reason") == "length",
        )  # fmt: skip
        if result.verdict != case["expected_verdict"]:
            misses.append({**case, "got": result.verdict, "method": result.method})
    return misses


SETS: dict[str, Callable[[], Agreement]] = {
    "realistic_cases": realistic_agreement,
    "realistic_cases_second": lambda: realistic_agreement(SECOND),
    "explained_cases": lambda: realistic_agreement(EXPLAINED),
    "scoring_cases": labelled_agreement,
    "verdict_classes": lambda: realistic_agreement(CLASSES),
    "peer_cases": peer_agreement,
}
"""Every labelled set, by the name of its file."""

HEADER = ("| set / class | rows | agreement (sure) | wrong credited | right refused | unsure |\n"
          "|---|---:|---:|---:|---:|---:|")  # fmt: skip


def table(*, by_class: bool = True) -> str:
    """The agreement of every set (and of each of its classes) as a Markdown table."""
    lines = [HEADER]
    everything = Tally()
    for name, measure in SETS.items():
        agreement = measure()
        lines.append(agreement.overall.row(f"**{name}**"))
        for field_name in ("rows", "sure", "sure_agreed", "unsure", "right", "right_credited",
                           "right_refused", "wrong", "wrong_credited"):  # fmt: skip
            setattr(
                everything,
                field_name,
                getattr(everything, field_name) + getattr(agreement.overall, field_name),
            )
        if by_class:
            lines.extend(tally.row(shape) for shape, tally in sorted(agreement.by_shape.items()))
    lines.append(everything.row("**all sets**"))
    return "\n".join(lines)


def _print(name: str, agreement: Agreement) -> None:
    skipped = f" ({agreement.skipped} skipped: gold is not one number)" if agreement.skipped else ""
    tally = agreement.overall
    print(
        f"{name}: {tally.rows} rows{skipped}; sure {tally.sure_agreed}/{tally.sure} = "
        f"{tally.sure_agreement:.3f}; wrong credited {tally.wrong_credited_share:.3f}, "
        f"right refused {tally.right_refused_share:.3f}, unsure {tally.unsure_share:.3f}"
    )
    for miss in agreement.misses + agreement.unsure_cases:
        shown = {k: miss.get(k) for k in ("id", "note", "shape", "answer", "gold", "expected",
                                           "correct", "got", "method", "reason")}  # fmt: skip
        response = str(miss.get("response") or miss.get("prediction"))[-160:]
        tag = "UNSURE" if miss["got"] == "unsure" else "MISS"
        print(f"  {tag} {json.dumps(shown, ensure_ascii=False)} … {response!r}")


if __name__ == "__main__":
    if sys.argv[1:] == ["--table"]:
        print(table())
    else:
        for set_name, measure in SETS.items():
            _print(set_name, measure())
