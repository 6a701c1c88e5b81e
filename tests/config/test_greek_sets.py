"""The two Greek reading sets: keys through the real scorer, measured difficulty, shape.

`language_understanding` (108 tasks) and `greek_messages` were each answered blind by three
readers (careful, fast one-line, working first); `data/blind_readers.jsonl` holds every
reader's answer, whether the scorer credits it, and an adjudication line for each miss. A
task's `difficulty` is derived from that table: three right is easy, two medium, else hard.
"""

from __future__ import annotations

import itertools
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from llm_eval.config.task_files import read_task_file
from llm_eval.schemas import SingleTurnTask
from llm_eval.scoring import score_text
from tests.conftest import REPO

SETS = ("language_understanding", "greek_messages")
READERS = ("careful", "fast", "working")
TASKS: dict[str, list[SingleTurnTask]] = {
    name: [
        loaded.task
        for loaded in read_task_file(REPO / "data" / f"{name}.jsonl").tasks
        if isinstance(loaded.task, SingleTurnTask)
    ]
    for name in SETS
}
ALL = [task for name in SETS for task in TASKS[name]]
TABLE_PATH = REPO / "data" / "blind_readers.jsonl"


def read_table(path: Path = TABLE_PATH) -> dict[str, dict[str, Any]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return {row["id"]: row for row in map(json.loads, filter(None, lines))}


TABLE = read_table()


def verdict(task: SingleTurnTask, reply: str) -> bool:
    return score_text(
        f"Απάντηση: {reply}", task.answer, answer_regex=task.answer_regex,
        accepted_answers=task.accepted_answers, distractors=task.distractors,
        question=task.question, answer_script=task.answer_script,
        answer_format=task.answer_format,
    ).correct  # fmt: skip


@pytest.mark.parametrize("task", ALL, ids=lambda t: t.id)
def test_the_answer_and_its_variants_are_right_and_every_decoy_wrong(task: SingleTurnTask) -> None:
    for answer in (task.answer, *task.accepted_answers):
        assert verdict(task, answer), answer
    for decoy in task.distractors:
        assert not verdict(task, decoy), decoy


# --- Difficulty is measured -------------------------------------------------------------


def level(right: int) -> str:
    return "easy" if right == 3 else "medium" if right == 2 else "hard"


def test_every_task_was_read_blind_by_three_readers_and_its_difficulty_follows() -> None:
    assert set(TABLE) == {task.id for task in ALL}
    for task in ALL:
        row = TABLE[task.id]
        assert row["benchmark"] in SETS and task.id.startswith(("lu_", "gm_"))
        assert all(isinstance(row[reader], bool) and row[f"{reader}_answer"] for reader in READERS)
        right = sum(row[reader] for reader in READERS)
        assert row["right"] == right and row["difficulty"] == level(right) == task.difficulty


def test_each_recorded_reader_verdict_is_the_scorers_or_the_adjudicators() -> None:
    # A reader's answer that adjudication found to be the key in another form is accepted in
    # the data, so the scorer credits it; the one wording the scorer reads as two answers
    # ("Συνετίστηκε, σοβάρεψε") is credited by the adjudication line that says so.
    for task in ALL:
        row = TABLE[task.id]
        credited = {line.split(":")[0] for line in row["adjudication"]
                    if "credited by adjudication" in line}  # fmt: skip
        for reader in READERS:
            scored = verdict(task, row[f"{reader}_answer"])
            assert scored is row[reader] or (reader in credited and row[reader]), (task.id, reader)


def test_every_miss_has_an_adjudication_line() -> None:
    for row in TABLE.values():
        missed = [reader for reader in READERS if not row[reader]]
        lines = [line for line in row["adjudication"] if " is wrong: " in line]
        assert sorted(line.split(":")[0] for line in lines) == sorted(missed), row["id"]
        assert all(len(line.split(" is wrong: ", 1)[1]) > 10 for line in lines)


def readers_table(readme: str) -> dict[str, list[str]]:
    """The data README's "What the readers measured" rows: set -> its cells, spaces removed."""
    rows = re.findall(r"^\| `(\w+)` \|(.+)\|$", readme, re.MULTILINE)
    return {name: [cell.replace(" ", "") for cell in cells.split("|")] for name, cells in rows
            if name in SETS}  # fmt: skip


def test_the_data_readme_states_what_the_readers_measured() -> None:
    stated = readers_table((REPO / "data" / "README.md").read_text(encoding="utf-8"))
    for name in SETS:
        rows = [row for row in TABLE.values() if row["benchmark"] == name]
        per_reader = [f"{sum(row[reader] for row in rows)}/{len(rows)}" for reader in READERS]
        levels = Counter(row["difficulty"] for row in rows)
        tiers = [str(levels[level]) for level in ("easy", "medium", "hard")]
        assert stated[name] == per_reader + tiers, name


# --- The sets' shape ---------------------------------------------------------------------

YES_NO = {"ναι", "όχι", "οχι", "yes", "no"}
OPTIONS = re.compile(r"(?:Διάλεξε|Επίλεξε|Ποιο από τα)[^:]*:")
HINTS = re.compile(r"τελικ|στο τέλος|μετά την αλλαγή|σωστ", re.IGNORECASE)


def stem(task: SingleTurnTask) -> str:
    """The question after the passage: after the closing » when the passage is quoted on one
    line with it, else the last line."""
    text = task.question.rstrip()
    tail = text[text.rfind("»") + 1 :]
    return tail if "»" in text and "\n" not in tail else text.rsplit("\n", 1)[-1]


def passage(task: SingleTurnTask) -> str:
    text = task.question
    return text[: len(text.rstrip()) - len(stem(task))]


def test_the_new_set_is_large_varied_and_open() -> None:
    tasks = TASKS["greek_messages"]
    assert len(tasks) >= 300 and len({t.id for t in tasks}) == len(tasks)
    assert len({t.category for t in tasks}) >= 12
    assert max(Counter(t.category for t in tasks).values()) <= 0.10 * len(tasks)
    low_chance = [t for t in tasks if t.answer.casefold() in YES_NO or OPTIONS.search(t.question)]
    assert len(low_chance) <= 0.15 * len(tasks)
    assert sum(bool(t.distractors) for t in tasks) >= 0.9 * len(tasks)


def test_no_question_stem_hints_at_the_answer() -> None:
    hinted = [t.id for t in ALL if HINTS.search(stem(t))]
    assert not hinted, hinted


def test_format_demands_are_declared_and_applied() -> None:
    demanded = [t for t in ALL if t.answer_format == "digits" or t.answer_script == "greek"]
    assert len(demanded) >= 40
    by_id = {task.id: task for task in ALL}
    assert not verdict(by_id["lu_024"], "Liakos")  # Greek script demanded
    digits = next(t for t in ALL if t.answer_format == "digits" and t.answer == "3")
    assert verdict(digits, "3") and not verdict(digits, "τρία")


def test_few_yes_no_or_option_items_in_the_revised_seed_set() -> None:
    tasks = TASKS["language_understanding"]
    assert len(tasks) == 108
    low_chance = [t for t in tasks if t.answer.casefold() in YES_NO or OPTIONS.search(t.question)]
    assert len(low_chance) <= 12, [t.id for t in low_chance]


def word_trigrams(text: str) -> set[tuple[str, ...]]:
    words = re.findall(r"\w+", text.casefold())
    return set(zip(words, words[1:], words[2:], strict=False))


def test_no_two_passages_share_more_than_a_fifth_of_their_word_trigrams() -> None:
    grams = {task.id: word_trigrams(passage(task)) for task in ALL}
    for (first, one), (second, other) in itertools.combinations(grams.items(), 2):
        shared = len(one & other) / min(len(one), len(other))
        assert shared <= 0.2, (first, second, round(shared, 3))
