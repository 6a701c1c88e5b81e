"""Bad input files get `file:line` errors, never a traceback or a hang."""

from __future__ import annotations

from pathlib import Path

from llm_eval.config.validation import validate
from tests.support.cli import llm_eval


def problems_text(root: Path) -> str:
    return "\n".join(str(problem) for problem in validate(str(root)).problems)


def test_a_task_line_that_is_not_utf8_is_reported_at_its_line(config_copy: Path) -> None:
    path = config_copy / "data" / "sample_math.jsonl"
    lines = path.read_bytes().split(b"\n")
    lines[2] = b'{"id": "bad", "question": "\xff\xfe"}'
    path.write_bytes(b"\n".join(lines))
    assert f"{path}:3: not valid UTF-8" in problems_text(config_copy)


def test_deeply_nested_json_is_reported_at_its_line(config_copy: Path) -> None:
    path = config_copy / "data" / "sample_math.jsonl"
    with path.open("a", encoding="utf-8") as handle:
        handle.write("[" * 100_000 + "]" * 100_000 + "\n")
    line = len(path.read_text(encoding="utf-8").splitlines())
    assert f"{path}:{line}: invalid JSON: nested too deeply" in problems_text(config_copy)


def test_a_yaml_alias_bomb_is_refused_at_once(config_copy: Path) -> None:
    bomb = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for level in range(1, 9):
        refs = ", ".join([f"*a{level - 1}"] * 10)
        bomb.append(f"a{level}: &a{level} [{refs}]")
    params = config_copy / "params.yaml"
    params.write_text(params.read_text(encoding="utf-8") + "\n".join(bomb) + "\n")
    text = problems_text(config_copy)  # expanded, the aliases would be 10**9 items
    assert f"{params}:" in text and "aliases would add more than 100000 nodes" in text


def test_yaml_that_is_not_utf8_is_reported(config_copy: Path) -> None:
    prompts = config_copy / "configs" / "prompts.yaml"
    prompts.write_bytes(prompts.read_bytes() + b"\n# \xff\n")
    assert f"{prompts}:" in problems_text(config_copy) and "not valid UTF-8" in problems_text(
        config_copy
    )


def test_a_benchmark_outside_the_config_root_is_a_warning(
    config_copy: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere.jsonl"
    outside.write_bytes((config_copy / "data" / "sample_math.jsonl").read_bytes())
    bench = config_copy / "configs" / "benchmarks.yaml"
    bench.write_text(
        bench.read_text(encoding="utf-8").replace("data/sample_math.jsonl", str(outside)),
        encoding="utf-8",
    )
    report = validate(str(config_copy))
    assert report.ok
    assert any("outside the config root" in str(w) for w in report.warnings)
    result = llm_eval("validate", "--config-root", str(config_copy))
    assert result.returncode == 0 and "warning:" in result.stderr


def test_a_regex_prone_to_backtracking_is_a_warning(config_copy: Path) -> None:
    path = config_copy / "data" / "sample_logic.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[0] = lines[0].replace('"answer":', '"answer_regex": "^(a+)+$", "answer":', 1)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = validate(str(config_copy))
    assert any(":1:" in str(w) and "catastrophically" in str(w) for w in report.warnings)


def test_the_language_tasks_format_fields_are_checked_at_their_line(config_copy: Path) -> None:
    path = config_copy / "data" / "language_understanding.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[4] = lines[4].replace('"difficulty": "easy"', '"difficulty": "very hard"')
    lines[6] = lines[6].replace(
        '"task_type": "single_turn"', '"answer_format": "roman", "task_type": "single_turn"'
    )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    text = problems_text(config_copy)
    assert f"{path}:5:" in text and "difficulty" in text
    assert f"{path}:7:" in text and "answer_format" in text
