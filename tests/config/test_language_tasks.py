"""Every language task's answer, its accepted forms and its decoys, through the real scorer."""

from __future__ import annotations

import pytest

from llm_eval.config.task_files import read_task_file
from llm_eval.schemas import SingleTurnTask
from llm_eval.scoring import score_text
from tests.conftest import REPO

TASKS = [
    loaded.task
    for loaded in read_task_file(REPO / "data" / "language_understanding.jsonl").tasks
    if isinstance(loaded.task, SingleTurnTask)
]


def verdict(task: SingleTurnTask, reply: str) -> bool:
    return score_text(
        f"Απάντηση: {reply}", task.answer, answer_regex=task.answer_regex,
        accepted_answers=task.accepted_answers, distractors=task.distractors,
        question=task.question, answer_script=task.answer_script,
        answer_format=task.answer_format,
    ).correct  # fmt: skip


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
def test_the_answer_and_its_variants_are_right_and_every_decoy_wrong(task: SingleTurnTask) -> None:
    for answer in (task.answer, *task.accepted_answers):
        assert verdict(task, answer), answer
    for decoy in task.distractors:
        assert not verdict(task, decoy), decoy


def test_format_demands_are_declared_where_the_question_asks() -> None:
    by_id = {task.id: task for task in TASKS}
    assert by_id["lu_021"].answer_script == "greek"
    assert by_id["lu_034"].answer_format == "digits"
    assert not verdict(by_id["lu_021"], "Dimitrakopoulou")
    assert not verdict(by_id["lu_034"], "τριάντα οχτώ")
    assert sum(bool(task.distractors) for task in TASKS) >= 60
