"""The echo rule finds each Greek task's passage by its structure, so a reply that only
copies the passage back is never credited, whatever short quotes the question also holds."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest

from llm_eval.scoring import score_text
from llm_eval.scoring.passage import passage_text
from tests.conftest import REPO

GREEK_SETS = ("greek_messages.jsonl", "language_understanding.jsonl")


@cache
def greek_tasks() -> list[dict[str, Any]]:
    tasks: list[dict[str, Any]] = []
    for name in GREEK_SETS:
        with (REPO / "data" / name).open(encoding="utf-8") as lines:
            tasks.extend(json.loads(line) for line in lines if line.strip())
    return tasks


def test_every_greek_set_is_counted() -> None:
    assert len(greek_tasks()) == 473


def score_copy(task: dict[str, Any], response: str) -> str:
    return score_text(
        response,
        task["answer"],
        accepted_answers=task.get("accepted_answers", ()),
        distractors=task.get("distractors", ()),
        question=task["question"],
        answer_script=task.get("answer_script"),
        answer_format=task.get("answer_format"),
    ).verdict


def test_a_copied_back_passage_is_refused_on_every_greek_task() -> None:
    credited = [
        task["id"]
        for task in greek_tasks()
        if score_copy(task, passage_text(task["question"])) == "correct"
    ]
    assert credited == []


def test_a_short_quote_in_a_subject_line_is_not_the_passage() -> None:
    (gm_259,) = [task for task in greek_tasks() if task["id"] == "gm_259"]
    passage = passage_text(gm_259["question"])
    assert passage.startswith("Email φίλων") and "κιαλια ο Ιασονας" in passage
    assert "Σε ποια θέση" not in passage  # the ask after the passage is not part of it
    assert score_copy(gm_259, passage) != "correct"


@pytest.mark.parametrize(
    ("question", "passage"),
    [
        ("Μήνυμα: «Ο «Κίνηση» είπε ναι, έρχεται αύριο το πρωί.» Τι είπε;",
         "Ο «Κίνηση» είπε ναι, έρχεται αύριο το πρωί."),
        ("Θέμα «Α» και «Β» σε μήνυμα χωρίς δομή", "Θέμα «Α» και «Β» σε μήνυμα χωρίς δομή"),
        ("Κείμενο χωρίς εισαγωγικά.\n\nΤι λέει;", "Κείμενο χωρίς εισαγωγικά."),
        ("Μόνο μια ερώτηση;", "Μόνο μια ερώτηση;"),
    ],
)  # fmt: skip
def test_the_passage_is_the_outermost_longest_quote_or_the_text_before_the_ask(
    question: str, passage: str
) -> None:
    assert passage_text(question) == passage
