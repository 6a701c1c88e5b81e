"""Every Greek task retold or sharpened after its first blind reading was read blind again.

`data/blind_rereads.jsonl` holds what a fresh reader, who saw only the task (never the key),
answered for each changed task, with any other answer they found defensible and any slip in
the text. A task whose reading found a second defensible answer or a slip that decides the
answer was fixed and read again (a later `reading`); the last reading of each task must give
the key and no other defensible answer.
"""

from __future__ import annotations

import json
import unicodedata
from typing import Any

from llm_eval.schemas import SingleTurnTask
from tests.config.test_greek_sets import TASKS
from tests.conftest import REPO

REREADS = REPO / "data" / "blind_rereads.jsonl"
READINGS = ("retold_1", "retold_2", "retold_3")


def fold(text: str) -> str:
    stripped = unicodedata.normalize("NFD", text.casefold().strip(" .«»"))
    return "".join(c for c in stripped if unicodedata.category(c) != "Mn").lstrip("0")


def rereads() -> list[dict[str, Any]]:
    lines = REREADS.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def tasks_by_id() -> dict[str, SingleTurnTask]:
    return {task.id: task for tasks in TASKS.values() for task in tasks}


def names_key(answer: str, task: SingleTurnTask) -> bool:
    """Whether an answer is the key or one of its accepted forms («Αίθουσα 1.4» for «1.4»)."""
    forms = {fold(form) for form in (task.answer, *(task.accepted_answers or []))}
    return fold(answer) in forms or fold(answer).removeprefix("αιθουσα ") in forms


def test_every_reading_names_a_task_and_a_known_round() -> None:
    tasks = tasks_by_id()
    rows = rereads()
    assert len(rows) >= 40
    for row in rows:
        assert row["id"] in tasks, row["id"]
        assert row["reading"] in READINGS, row
        assert row["answer"].strip(), row


def test_the_last_reading_of_each_task_gives_the_key_and_nothing_else() -> None:
    tasks = tasks_by_id()
    last: dict[str, dict[str, Any]] = {}
    for row in rereads():
        if row["id"] not in last or READINGS.index(row["reading"]) >= READINGS.index(
            last[row["id"]]["reading"]
        ):
            last[row["id"]] = row
    wrong = {i: r["answer"] for i, r in last.items() if not names_key(r["answer"], tasks[i])}
    doubtful = {
        i: others
        for i, r in last.items()
        if (others := [o for o in r["defensible_others"] if not names_key(o, tasks[i])])
    }
    assert not wrong, wrong
    assert not doubtful, doubtful
