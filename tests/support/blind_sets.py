"""The scorer measured against the held-back sets, overall and by class of reply.

Each set (`tests/scoring/blind_round5.jsonl`: 467 replies, `blind_round6.jsonl`: 322,
`blind_round7.jsonl`: 380, `blind_round8.jsonl`: 360, `blind_round9.jsonl`: 360) holds
replies written the way models answer (working then an answer, headings and bold, boxes,
self-corrections, hedges, other languages, inflected names, appositives, decoys inside
descriptions, ordinals, LaTeX expressions, ranges, truncations, paraphrases, gaming), each
labelled `correct`, `incorrect` or `ambiguous` by a careful grader who saw the task, the key
and the reply but never the scorer's rules, and read a second time blind to the first
reasons.

    uv run python -m tests.support.blind_sets          # every set: figures, classes, misses
    uv run python -m tests.support.blind_sets blind_round5   # one set

`tests/scoring/test_blind_sets.py` checks every set is well formed and asserts its goals.

Figures (a sure verdict is `correct` or `incorrect`; ambiguous labels count only in the
unsure share and the row total):
- sure agreement: sure verdicts equal to the label, over sure verdicts on labelled rows;
- wrong credited: rows labelled `incorrect` the scorer calls `correct`, over those rows;
- right refused: rows labelled `correct` the scorer calls `incorrect`, over those rows;
- unsure share: `unsure` verdicts over all rows;
- gaming credited: gaming replies (any class whose name holds "gaming": `gaming_list`,
  `gaming_all_candidates`) the scorer calls `correct` (a count).
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from llm_eval.scoring import AnswerKey, ScoreResult, score_key

CASES = Path(__file__).resolve().parents[1] / "scoring"
BLIND_SETS = {
    name: CASES / f"{name}.jsonl"
    for name in (
        "blind_round5",
        "blind_round6",
        "blind_round7",
        "blind_round8",
        "blind_round9",
        "blind_round10",
        "blind_round11",
        "blind_round12",
        "blind_round13",
    )
}
LABELS = ("correct", "incorrect", "ambiguous")


@dataclass(frozen=True)
class Goals:
    """The agreement a scorer must reach on a held-back set."""

    sure_agreement: float = 0.99
    wrong_credited: float = 0.005
    unsure_share: float = 0.08
    gaming_credited: int = 0


def is_gaming(shape: str) -> bool:
    """Whether a class of reply is gaming (the sets name several: `gaming_list`, …)."""
    return "gaming" in shape


@dataclass
class Tally:
    """Counts for one group of rows (the whole set, or one class of reply)."""

    rows: int = 0
    sure_labelled: int = 0
    sure_agreed: int = 0
    labelled_wrong: int = 0
    wrong_credited: int = 0
    labelled_right: int = 0
    right_refused: int = 0
    unsure: int = 0
    gaming_credited: int = 0
    misses: list[str] = field(default_factory=list)
    """Ids of sure verdicts that disagree with the label."""
    unsure_ids: list[str] = field(default_factory=list)

    @property
    def sure_agreement(self) -> float:
        return self.sure_agreed / self.sure_labelled if self.sure_labelled else 1.0

    @property
    def wrong_credited_share(self) -> float:
        return self.wrong_credited / self.labelled_wrong if self.labelled_wrong else 0.0

    @property
    def right_refused_share(self) -> float:
        return self.right_refused / self.labelled_right if self.labelled_right else 0.0

    @property
    def unsure_share(self) -> float:
        return self.unsure / self.rows if self.rows else 0.0

    def add(self, case: dict[str, Any], result: ScoreResult) -> None:
        label, verdict = case["label"], result.verdict
        self.rows += 1
        if verdict == "unsure":
            self.unsure += 1
            self.unsure_ids.append(case["id"])
        if is_gaming(case["shape"]) and verdict == "correct":
            self.gaming_credited += 1
        if label == "ambiguous":
            return
        if label == "incorrect":
            self.labelled_wrong += 1
            self.wrong_credited += verdict == "correct"
        else:
            self.labelled_right += 1
            self.right_refused += verdict == "incorrect"
        if verdict != "unsure":
            self.sure_labelled += 1
            if verdict == label:
                self.sure_agreed += 1
            else:
                self.misses.append(case["id"])


@dataclass
class Measure:
    """The whole set's tally, one tally per class of reply, and each row's verdict."""

    overall: Tally = field(default_factory=Tally)
    by_shape: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))
    verdicts: dict[str, ScoreResult] = field(default_factory=dict)

    def shortfalls(self, goals: Goals) -> list[str]:
        """Each goal the scorer misses on this set, said with the figure it reached."""
        t = self.overall
        checks = [
            (t.sure_agreement >= goals.sure_agreement,
             f"sure agreement {t.sure_agreement:.3f} < {goals.sure_agreement}"),
            (t.wrong_credited_share <= goals.wrong_credited,
             f"wrong credited {t.wrong_credited_share:.3f} > {goals.wrong_credited}"),
            (t.unsure_share <= goals.unsure_share,
             f"unsure share {t.unsure_share:.3f} > {goals.unsure_share}"),
            (t.gaming_credited <= goals.gaming_credited,
             f"gaming credited {t.gaming_credited} > {goals.gaming_credited}"),
        ]  # fmt: skip
        return [message for ok, message in checks if not ok]


def load_cases(path: Path) -> list[dict[str, Any]]:
    """The set's rows, in file order."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


WITHDRAWN_FORMS: dict[str, frozenset[str]] = {
    task: frozenset(forms)
    for task, forms in json.loads(
        (CASES / "withdrawn_forms.json").read_text(encoding="utf-8")
    ).items()
}
"""Accepted forms taken out of a task after a set had copied them: paraphrases a blind reader
refused, and forms the question's own words forbid (a month in words under «ΗΗ/ΜΜ», a file
name without the extension the question demands). The current key decides, as in `score`."""


def answer_key(case: dict[str, Any]) -> AnswerKey:
    """The key the task file gives, as the scorer receives it: the row's copy, less the forms
    withdrawn from the task since."""
    withdrawn = WITHDRAWN_FORMS.get(case.get("task_id") or "", frozenset())
    accepted = [form for form in case.get("accepted_answers") or () if form not in withdrawn]
    return AnswerKey(
        answer=case["answer"],
        accepted=tuple(accepted),
        distractors=tuple(case.get("distractors") or ()),
        question=case.get("question"),
        answer_script=case.get("answer_script"),
        answer_format=case.get("answer_format"),
    )


def measure(cases: list[dict[str, Any]]) -> Measure:
    """Score every row with `score_key` and tally the verdicts against the labels."""
    result = Measure()
    for case in cases:
        verdict = score_key(
            case["response"], answer_key(case), case["kind"], truncated=bool(case["truncated"])
        )
        result.verdicts[case["id"]] = verdict
        result.overall.add(case, verdict)
        result.by_shape[case["shape"]].add(case, verdict)
    return result


def _line(name: str, t: Tally) -> str:
    return (f"{name:22s} rows {t.rows:3d}"
            f"  sure agreement {t.sure_agreed:3d}/{t.sure_labelled:<3d} = {t.sure_agreement:.3f}"
            f"  wrong credited {t.wrong_credited:2d}/{t.labelled_wrong:<3d}"
            f"  right refused {t.right_refused:2d}/{t.labelled_right:<3d}"
            f"  unsure {t.unsure:2d} ({t.unsure_share:.3f})")  # fmt: skip


def report(result: Measure, cases: list[dict[str, Any]]) -> str:
    """Every figure of `measure` on `cases`, overall then by class, and the rows it got
    wrong."""
    t = result.overall
    lines = [
        _line("ALL", t),
        f"wrong credited {t.wrong_credited_share:.3f}, right refused {t.right_refused_share:.3f}, "
        f"gaming credited {t.gaming_credited}",
    ]
    for shape in sorted(result.by_shape, key=lambda s: -result.by_shape[s].rows):
        lines.append(_line(shape, result.by_shape[shape]))
    by_id = {case["id"]: case for case in cases}
    for miss in t.misses:
        case, verdict = by_id[miss], result.verdicts[miss]
        lines.append(f"  MISS {miss} {case['task_id']} {case['shape']} label={case['label']} "
                     f"verdict={verdict.verdict} ({verdict.method}) … "
                     f"{case['response'][-90:]!r}")  # fmt: skip
    if t.unsure_ids:
        lines.append(f"  UNSURE {' '.join(t.unsure_ids)}")
    return "\n".join(lines)


if __name__ == "__main__":
    for set_name in sys.argv[1:] or BLIND_SETS:
        set_cases = load_cases(BLIND_SETS[set_name])
        print(f"## {set_name}\n{report(measure(set_cases), set_cases)}\n")
