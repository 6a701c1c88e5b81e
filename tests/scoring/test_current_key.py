"""Today's key grades a row: `with_current_key`, `current_keys` and `score` in a suite copy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llm_eval.config.run_inputs import question_digest
from llm_eval.errors import ConfigError
from llm_eval.schemas import GradingKey, SingleTurnTask, TraceRow
from llm_eval.scoring.current_key import (
    CurrentTask,
    KeyChanges,
    current_keys,
    with_current_key,
)
from llm_eval.scoring.rows import score_rows
from tests.support.cli import llm_eval
from tests.support.rows import make_row

QUESTION = "What is 6 times 7?"


def task(answer: str = "42", question: str = QUESTION, **fields: object) -> SingleTurnTask:
    return SingleTurnTask(task_type="single_turn", id="t1", question=question, answer=answer,
                          **fields)  # type: ignore[arg-type]  # fmt: skip


def row(answer: str = "42", response: str = "42", **fields: object) -> TraceRow:
    return make_row(
        benchmark="b", task_id="t1", answer=answer, response=response,
        messages=[{"role": "user", "content": QUESTION}],
        question_digest=question_digest(task()), **fields,
    )  # fmt: skip


def keys(*tasks: SingleTurnTask, scorer: str = "numeric") -> dict[tuple[str, str], CurrentTask]:
    return {("b", t.id): CurrentTask.of(t, scorer) for t in tasks}


def test_an_unchanged_key_returns_the_same_row() -> None:
    made = row()
    assert with_current_key(made, keys(task())) is made


def test_a_fixed_key_grades_the_row_and_the_run_key_stays_as_a_record() -> None:
    made = row(answer="42", response="The answer is 41.")
    fixed = task(answer="41", distractors=["42"])
    regraded = with_current_key(made, keys(fixed))
    assert (regraded.answer, regraded.distractors) == ("41", ["42"])
    assert regraded.run_key == GradingKey(answer="42", scorer="numeric")
    assert regraded.key_unchecked is None
    (scored,) = score_rows([regraded])
    assert (made.status, scored.status) == ("correct", "correct")
    changes = KeyChanges.of([scored])
    assert (changes.regraded, changes.verdicts_changed) == (1, 1)
    assert "1 verdict(s) changed because the key changed" in str(changes.summary())


def test_a_second_fix_keeps_the_key_the_row_ran_under_and_a_revert_drops_it() -> None:
    once = with_current_key(row(), keys(task(answer="41")))
    twice = with_current_key(once, keys(task(answer="40")))
    assert twice.answer == "40" and twice.run_key is not None and twice.run_key.answer == "42"
    back = with_current_key(twice, keys(task(answer="42")))
    assert back.answer == "42" and back.run_key is None
    assert back == row()


def test_a_scorer_change_in_the_benchmark_is_a_key_change() -> None:
    regraded = with_current_key(row(), keys(task(), scorer="exact"))
    assert regraded.scorer == "exact" and regraded.run_key is not None
    assert regraded.run_key.scorer == "numeric"


def test_a_removed_task_is_graded_by_the_key_it_ran_under_and_said_so() -> None:
    fixed_before = with_current_key(row(), keys(task(answer="41")))
    for made in (row(), fixed_before):
        kept = with_current_key(made, {})
        assert kept.key_unchecked == "task_missing"
        assert kept.answer == "42" and kept.run_key is None
    changes = KeyChanges.of(score_rows([with_current_key(row(), {})]))
    assert changes.missing == ["b/t1"] and changes.regraded == 0
    assert "removed or renamed" in changes.warnings()[0] and "b/t1" in changes.warnings()[0]


def test_a_changed_question_keeps_the_key_the_reply_answered() -> None:
    kept = with_current_key(row(), keys(task(answer="8", question="What is 2 cubed?")))
    assert kept.key_unchecked == "task_text_changed" and kept.answer == "42"
    assert "changed since" in KeyChanges.of(score_rows([kept])).warnings()[0]


def test_error_rows_take_the_key_but_count_as_no_verdict() -> None:
    failed = make_row(benchmark="b", task_id="t1", status="error")
    regraded = score_rows([with_current_key(failed, keys(task(answer="41")))])
    assert regraded[0].status == "error" and regraded[0].answer == "41"
    assert KeyChanges.of(regraded).regraded == 0


# --------------------------------------------------------------------------- from a suite


def first_math_task(root: Path) -> dict[str, object]:
    line = (root / "data" / "sample_math.jsonl").read_text(encoding="utf-8").splitlines()[0]
    loaded: dict[str, object] = json.loads(line)
    return loaded


def replace_first_math_task(root: Path, new: dict[str, object] | None) -> None:
    path = root / "data" / "sample_math.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[0:1] = [json.dumps(new)] if new is not None else []
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_current_keys_reads_todays_task_files_and_scorers(config_copy: Path) -> None:
    math = first_math_task(config_copy)
    replace_first_math_task(config_copy, {**math, "answer": "86"})
    found = current_keys(config_copy, ["sample_math", "gone_benchmark"])
    assert found[("sample_math", "math_001")].key == GradingKey(answer="86", scorer="numeric")
    assert {benchmark for benchmark, _ in found} == {"sample_math"}


def test_current_keys_refuses_a_bad_task_line_and_a_missing_config(
    config_copy: Path, tmp_path: Path
) -> None:
    path = config_copy / "data" / "sample_math.jsonl"
    path.write_text(path.read_text(encoding="utf-8") + "{not json\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"sample_math\.jsonl:9: invalid JSON"):
        current_keys(config_copy, ["sample_math"])
    with pytest.raises(ConfigError, match="today's answer keys"):
        current_keys(tmp_path / "nowhere", ["sample_math"])


def test_score_grades_by_todays_key_and_says_what_it_changed(
    config_copy: Path, tmp_path: Path
) -> None:
    trace = tmp_path / "t.jsonl"
    ran = llm_eval("run", "--config-root", str(config_copy), "--mock", "--model", "mock-varied",
                   "--benchmark", "sample_math", "--limit", "3",
                   "--output", str(trace))  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    rows = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    assert [r["status"] for r in rows] == ["correct"] * 3
    math = first_math_task(config_copy)
    replace_first_math_task(config_copy, {**math, "answer": "86"})  # a key fix: 85 -> 86
    path = config_copy / "data" / "sample_math.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[1] = lines[1].replace('"math_002"', '"math_002_renamed"')
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    scored = tmp_path / "s.jsonl"
    done = llm_eval("score", "--config-root", str(config_copy), "--results", str(trace),
                    "--output", str(scored))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "3 rows scored, 1 verdict(s) changed" in done.stdout
    assert "1 row(s) graded by today's key" in done.stdout
    assert "1 verdict(s) changed because the key changed" in done.stdout
    assert "removed or renamed): sample_math/math_002" in done.stderr
    by_task = {r["task_id"]: r for r in map(json.loads, scored.read_text().splitlines())}
    assert by_task["math_001"]["status"] == "incorrect" and by_task["math_001"]["answer"] == "86"
    assert by_task["math_001"]["run_key"]["answer"] == "85"
    assert by_task["math_002"]["key_unchecked"] == "task_missing"
    assert by_task["math_002"]["status"] == "correct"
    explained = llm_eval("score", "--config-root", str(config_copy), "--results", str(trace),
                         "--explain", "math_001")  # fmt: skip
    assert "expected: '86'" in explained.stdout and "the run's key: '85'" in explained.stdout
