"""No input ends in a traceback: each of these gets one clear line (or is simply handled)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.catalog import add_models
from tests.support.cli import llm_eval


def run_mock(root: Path, output: Path, *extra: str):  # type: ignore[no-untyped-def]
    selection = ["--model", "mock-varied", "--benchmark", "sample_math", "--limit", "2"]
    return llm_eval("run", "--mock", *selection, "--output", str(output),
                    "--config-root", str(root), *extra)  # fmt: skip


def assert_one_line(stderr: str, *expected: str) -> None:
    assert "Traceback" not in stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert all(text in lines[0] for text in expected), lines[0]


def test_a_lock_path_that_cannot_be_created_is_one_line(config_copy: Path, tmp_path: Path) -> None:
    output = tmp_path / "t.jsonl"
    (tmp_path / "t.jsonl.lock").mkdir()  # a folder where the lock file goes
    result = run_mock(config_copy, output)
    assert result.returncode == 2
    assert_one_line(result.stderr, "cannot create the lock file", "t.jsonl.lock")
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    result = run_mock(config_copy, blocker / "t.jsonl")  # its folder is a file
    assert result.returncode == 2
    assert_one_line(result.stderr, "--output", "writable folder")


def test_a_second_plain_run_into_one_output_is_refused(config_copy: Path, tmp_path: Path) -> None:
    output = tmp_path / "t.jsonl"
    assert run_mock(config_copy, output).returncode == 0
    before = output.read_bytes()
    second = run_mock(config_copy, output)
    assert second.returncode == 2
    assert_one_line(second.stderr, "already holds a run", "--resume", "--overwrite")
    assert output.read_bytes() == before
    assert run_mock(config_copy, output, "--overwrite").returncode == 0


def test_a_lone_surrogate_in_a_task_file_is_named_at_its_line(
    config_copy: Path, tmp_path: Path
) -> None:
    tasks = config_copy / "data" / "sample_math.jsonl"
    first = json.loads(tasks.read_text(encoding="utf-8").splitlines()[0])
    first["question"] = "Half an emoji \ud83d: " + first["question"]
    rest = tasks.read_text(encoding="utf-8").splitlines()[1:]
    tasks.write_text("\n".join([json.dumps(first), *rest]) + "\n", encoding="utf-8")
    assert "\\ud83d" in tasks.read_text(encoding="utf-8")  # valid JSON, escaped in the file
    result = run_mock(config_copy, tmp_path / "t.jsonl")
    assert result.returncode == 1
    assert_one_line(result.stderr, f"{tasks}:1:", "question")


def test_a_long_plain_params_file_loads(config_copy: Path) -> None:
    extra = {
        f"extra-{index}": {"provider": "mock", "model": f"mock/m{index}",
                           "label": f"Extra {index}", "profile": "varied"}
        for index in range(10_000)
    }  # fmt: skip
    add_models(config_copy, extra)
    result = llm_eval("validate", "--config-root", str(config_copy))
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Traceback" not in result.stderr and "aliases" not in result.stderr


def test_a_password_in_api_base_is_refused_by_validate(config_copy: Path) -> None:
    remote = {"provider": "litellm", "model": "openai/m",
              "api_base": "http://user:hunter2-pw@127.0.0.1:9/v1"}  # fmt: skip
    params_path = add_models(config_copy, {"remote": remote})
    result = llm_eval("validate", "--config-root", str(config_copy))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    problem, summary = result.stderr.strip().splitlines()
    assert f"{params_path}:" in problem and "api_base" in problem and "api_key_env" in problem
    assert "hunter2-pw" not in result.stderr and summary.startswith("validation failed")
