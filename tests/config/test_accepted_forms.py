"""No accepted form of a Greek task breaks the form the task's own question demands.

A key lists the forms a careful grader accepts. Where the question asks for a date «ΗΗ/ΜΜ», a
month written in words is a different form, and where it asks for a file name «μαζί με την
κατάληξη», a name without the extension is not what was asked: listing either would credit a
reply a careful grader refuses.
"""

from __future__ import annotations

import re
import unicodedata

import pytest

from llm_eval.schemas import SingleTurnTask
from tests.config.test_greek_sets import TASKS

MONTH_STEMS = re.compile(
    r"ιανουαρ|φεβρουαρ|μαρτ|απριλ|μαι|ιουν|ιουλ|αυγουστ|σεπτεμβρ|οκτωβρ|νοεμβρ|δεκεμβρ"
)
DATE_DEMAND = re.compile(r"ηη/μμ|dd/mm", re.I)
EXTENSION_DEMAND = re.compile(r"καταληξη")
EXTENSION = re.compile(r"\.\w{2,4}$")


def fold(text: str) -> str:
    stripped = unicodedata.normalize("NFD", text.casefold())
    return "".join(c for c in stripped if unicodedata.category(c) != "Mn")


def ask(task: SingleTurnTask) -> str:
    """The question's own words, after the quoted passage."""
    return fold(task.question.rsplit("»", 1)[-1])


def forbidden_forms(task: SingleTurnTask) -> list[str]:
    forms = task.accepted_answers or []
    bad: list[str] = []
    if DATE_DEMAND.search(ask(task)):
        bad += [form for form in forms if MONTH_STEMS.search(fold(form))]
    extension = EXTENSION.search(task.answer)
    if EXTENSION_DEMAND.search(ask(task)) and extension:
        bad += [form for form in forms if not form.endswith(extension.group(0))]
    return bad


@pytest.mark.parametrize("name", sorted(TASKS))
def test_no_accepted_form_breaks_the_question_s_demand(name: str) -> None:
    broken = {task.id: forms for task in TASKS[name] if (forms := forbidden_forms(task))}
    assert not broken, broken


def test_the_check_sees_a_month_in_words_under_a_date_demand() -> None:
    task = SingleTurnTask(
        id="t",
        task_type="single_turn",
        question="«Η προθεσμία είναι στις 27/2.» Ποια ημερομηνία; Γράψε τη μορφή ηη/μμ.",
        answer="27/02",
        accepted_answers=["27/2", "27 Φεβρουαρίου"],
    )
    assert forbidden_forms(task) == ["27 Φεβρουαρίου"]
