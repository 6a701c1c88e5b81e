"""Every language task's answer, its accepted forms and its decoys, through the real scorer."""

from __future__ import annotations

import itertools
import re
import statistics
from collections import Counter

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
    assert by_id["lu_024"].answer_script == "greek"
    assert by_id["lu_084"].answer_format == "digits"
    assert not verdict(by_id["lu_024"], "Liakos")
    assert not verdict(by_id["lu_084"], "τέσσερα")
    assert sum(bool(task.distractors) for task in TASKS) >= 60


# --- The set's shape: what makes it able to separate strong models ------------------------

GREEK_LETTER = re.compile("[\u0370-\u03ff\u1f00-\u1fff]")
LATIN_LETTER = re.compile("[A-Za-z]")
OPTIONS = re.compile(r"(?:Διάλεξε|Επίλεξε)[^:]*:\s*(?P<options>[^.]*)\.")


def passage(task: SingleTurnTask) -> str:
    """The quoted passage: from the first « to the » that closes it before the question."""
    text = task.question
    end = text.rfind("»", 0, text.rfind("«ναι»")) if "«ναι»" in text else text.rfind("»")
    return text[text.find("«") + 1 : end]


def test_the_set_has_a_difficulty_range_and_real_passages() -> None:
    assert len(TASKS) == 108
    assert len({task.category for task in TASKS}) >= 12
    levels = Counter(task.difficulty for task in TASKS)
    assert set(levels) == {"easy", "medium", "hard"}
    assert levels["hard"] >= 30
    assert min(levels.values()) >= 30
    passages = [passage(task) for task in TASKS]
    assert all(passages), "every task quotes a passage"
    assert statistics.median(len(text.split()) for text in passages) >= 35
    greek = sum(len(GREEK_LETTER.findall(t)) > len(LATIN_LETTER.findall(t)) for t in passages)
    assert greek >= 80


def test_the_right_option_is_first_in_at_most_half_and_never_always_in_one_place() -> None:
    places = []
    for task in TASKS:
        found = OPTIONS.search(task.question)
        if found:
            options = [part.strip() for part in found["options"].split(",")]
            assert task.answer in options, (task.id, options)
            index = options.index(task.answer)
            places.append("first" if index == 0 else "last" if index == len(options) - 1 else "mid")
    assert len(places) >= 5
    counts = Counter(places)
    assert counts["first"] <= len(places) / 2
    # A model that always picks one position must not gain: no place holds most answers.
    assert max(counts.values()) <= len(places) / 2, counts


def word_trigrams(text: str) -> set[tuple[str, ...]]:
    words = text.casefold().split()
    return {tuple(words[i : i + 3]) for i in range(len(words) - 2)}


def test_no_two_tasks_share_a_passage_template() -> None:
    # A template shows as shared word runs; distinct passages share almost none (max ~0.02).
    grams = {task.id: word_trigrams(passage(task)) for task in TASKS}
    for (first, one), (second, other) in itertools.combinations(grams.items(), 2):
        assert len(one & other) / len(one | other) < 0.2, (first, second)
