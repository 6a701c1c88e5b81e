"""`score --judge MODEL`: settle the rows still unsure after people's reviews by a judge model,
keeping each verdict in reviews/judge.jsonl so a rescore asks only about new replies."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from llm_eval.config.loading import AppConfig
    from llm_eval.schemas import TraceRow
    from llm_eval.scoring.judged import JudgeKey, Judgement


@dataclass
class JudgeStep:
    """The judge of one `score` command, with the verdicts it has kept so far."""

    judge: str
    config: AppConfig
    path: Path
    kept: dict[JudgeKey, Judgement] = field(default_factory=dict)

    @classmethod
    def open(cls, judge: str, config_root: Path) -> JudgeStep:
        from llm_eval.config.loading import load_config
        from llm_eval.scoring.judged import JUDGE_FILE, read_judgements

        path = config_root / JUDGE_FILE
        return cls(judge, load_config(config_root), path, read_judgements(path))

    def settle(self, source: Path, rows: list[TraceRow]) -> list[TraceRow]:
        """Ask about the unsure replies not yet kept, keep the answers, apply them all."""
        from llm_eval.runner.judge import ask_judge, rows_to_ask
        from llm_eval.scoring.judged import apply_judgements
        from llm_eval.scoring.reviews import append_records

        asking = rows_to_ask(rows, self.kept, self.judge)
        outcome = ask_judge(asking, self.judge, self.config)
        append_records(self.path, outcome.judgements)
        self.kept.update((record.judge_key, record) for record in outcome.judgements)
        settled = apply_judgements(rows, self.kept, self.judge)
        decided = sum(row.score is not None and row.score.source == "judge" for row in settled)
        print(
            f"{source}: judge {self.judge}: {len(asking)} repl(ies) asked, "
            f"{len(outcome.failures)} failed (left unsure), {decided} row(s) settled by the judge"
        )
        for failure in outcome.failures[:5]:
            print(f"  judge call failed: {failure}", file=sys.stderr)
        return settled
