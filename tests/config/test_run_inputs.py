"""The `run` stage's inputs: everything a run sends, nothing that only grades the reply."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from llm_eval.config.loading import load_config
from llm_eval.config.run_inputs import run_inputs, sent_fields
from llm_eval.schemas import KEY_FIELDS, SingleTurnTask
from tests.support.cli import llm_eval

MATH = Path("data") / "sample_math.jsonl"


def edit_first_task(root: Path, change: Callable[[dict[str, Any]], None]) -> None:
    lines = (root / MATH).read_text(encoding="utf-8").splitlines()
    task = json.loads(lines[0])
    change(task)
    lines[0] = json.dumps(task, ensure_ascii=False)
    (root / MATH).write_text("\n".join(lines) + "\n", encoding="utf-8")


def edit_benchmark(root: Path, **settings: Any) -> None:
    path = root / "configs" / "benchmarks.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["benchmarks"]["sample_math"].update(settings)
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")


def test_every_key_field_is_a_task_field_and_left_out_of_what_is_sent() -> None:
    task = SingleTurnTask(task_type="single_turn", id="a", question="q", answer="1")
    assert set(SingleTurnTask.model_fields) > KEY_FIELDS
    assert set(sent_fields(task)) == set(SingleTurnTask.model_fields) - KEY_FIELDS


KEY_FIXES: dict[str, Callable[[Path], None]] = {
    "answer": lambda root: edit_first_task(root, lambda t: t.update(answer="86")),
    "accepted forms and decoys": lambda root: edit_first_task(
        root, lambda t: t.update(accepted_answers=["eighty-five"], distractors=["84"])
    ),
    "format and regex": lambda root: edit_first_task(
        root, lambda t: t.update(answer_format="digits", answer_regex=r"\b85\b")
    ),
    "scorer": lambda root: edit_benchmark(root, scorer="exact"),
    "description": lambda root: edit_benchmark(root, description="renamed"),
}

SENT_CHANGES: dict[str, Callable[[Path], None]] = {
    "question": lambda root: edit_first_task(root, lambda t: t.update(question="What is 1+1?")),
    "category": lambda root: edit_first_task(root, lambda t: t.update(category="other")),
    "prompt": lambda root: edit_benchmark(root, prompt="default"),
    "tools": lambda root: edit_benchmark(root, tools=["python_exec"]),
    "a new task": lambda root: (root / MATH).write_text(
        (root / MATH).read_text(encoding="utf-8")
        + '{"id": "math_new", "task_type": "single_turn", "question": "2+2?", "answer": "4"}\n',
        encoding="utf-8",
    ),
}


@pytest.mark.parametrize("fix", sorted(KEY_FIXES))
def test_a_key_or_scorer_fix_leaves_the_run_inputs_unchanged(config_copy: Path, fix: str) -> None:
    before = run_inputs(load_config(config_copy))
    KEY_FIXES[fix](config_copy)
    assert run_inputs(load_config(config_copy)) == before


@pytest.mark.parametrize("change", sorted(SENT_CHANGES))
def test_a_change_to_what_is_sent_changes_its_benchmarks_entry(
    config_copy: Path, change: str
) -> None:
    before = run_inputs(load_config(config_copy))["benchmarks"]
    SENT_CHANGES[change](config_copy)
    after = run_inputs(load_config(config_copy))["benchmarks"]
    assert after["sample_math"] != before["sample_math"]
    assert {k: v for k, v in after.items() if k != "sample_math"} == {
        k: v for k, v in before.items() if k != "sample_math"
    }


def test_validate_writes_the_run_inputs_only_when_the_suite_is_valid(
    config_copy: Path, tmp_path: Path
) -> None:
    written = tmp_path / "run_inputs.json"
    done = llm_eval("validate", "--config-root", str(config_copy), "--run-inputs", str(written))
    assert done.returncode == 0, done.stderr
    assert json.loads(written.read_text())["benchmarks"]["sample_math"]["tasks"] == 8
    written.unlink()
    edit_first_task(config_copy, lambda t: t.update(question=""))
    done = llm_eval("validate", "--config-root", str(config_copy), "--run-inputs", str(written))
    assert done.returncode == 1 and not written.exists()


def test_the_run_code_and_the_prompt_and_tool_files_are_digested(
    config_copy: Path, tmp_path: Path
) -> None:
    """`run` depends on run_inputs.json alone: a prompt edit or a change to the model-running
    code must change it, a change to the scorer must not."""
    import shutil

    import llm_eval
    from llm_eval.config.run_inputs import code_digest

    before = run_inputs(load_config(config_copy))
    prompts = config_copy / "configs/prompts.yaml"
    prompts.write_text(prompts.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    after = run_inputs(load_config(config_copy))
    assert after["files"]["configs/prompts.yaml"] != before["files"]["configs/prompts.yaml"]
    assert after["files"]["configs/tools.yaml"] == before["files"]["configs/tools.yaml"]

    package = tmp_path / "llm_eval"
    shutil.copytree(
        Path(llm_eval.__file__).parent, package, ignore=shutil.ignore_patterns("__pycache__")
    )
    assert code_digest(package) == before["code"]
    scorer = package / "scoring/result.py"
    scorer.write_text(scorer.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    assert code_digest(package) == before["code"]
    runner = package / "runner/runner.py"
    runner.write_text(runner.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    assert code_digest(package) != before["code"]
