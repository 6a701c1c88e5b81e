"""`llm-eval validate`: the real suite passes; a broken copy reports every problem with its line."""

from __future__ import annotations

import json
from pathlib import Path

from llm_eval.config.validation import validate
from tests.conftest import REPO
from tests.support.catalog import add_models
from tests.support.suite import SUITE_COUNTS


def test_the_repository_suite_is_valid_with_exact_counts() -> None:
    report = validate(str(REPO))
    assert report.problems == []
    assert report.task_counts == SUITE_COUNTS
    assert sum(report.task_counts.values()) == 156 + 365


def _line_of(path: Path, needle: str) -> int:
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in {path}")


def _break_suite(root: Path) -> dict[str, tuple[Path, int]]:
    """Inject five independent faults; return where each one should be reported."""
    math = root / "data" / "sample_math.jsonl"
    lines = math.read_text(encoding="utf-8").splitlines()
    lines[2] = lines[2][:-1]  # broken JSON on line 3
    lines[4] = lines[0]  # duplicate id on line 5
    math.write_text("\n".join(lines) + "\n", encoding="utf-8")

    logic = root / "data" / "sample_logic.jsonl"
    rows = logic.read_text(encoding="utf-8").splitlines()
    task = json.loads(rows[1])
    task["task_type"] = "multi_turn"  # wrong type on line 2 (and now missing `turns`)
    rows[1] = json.dumps(task)
    logic.write_text("\n".join(rows) + "\n", encoding="utf-8")

    tools = root / "data" / "sample_tools.jsonl"
    rows = tools.read_text(encoding="utf-8").splitlines()
    task = json.loads(rows[0])
    task["expected_tools"] = ["web_search"]  # unknown tool on line 1
    rows[0] = json.dumps(task)
    tools.write_text("\n".join(rows) + "\n", encoding="utf-8")

    params = root / "configs" / "models.yaml"
    text = params.read_text(encoding="utf-8")
    text = text.replace(
        "    profile: varied\n", "    profile: varied\n    prompt: no_such_prompt\n", 1
    )
    params.write_text(text, encoding="utf-8")
    return {
        "invalid JSON": (math, 3),
        "duplicate task id": (math, 5),
        "task_type": (logic, 2),
        "web_search": (tools, 1),
        "no_such_prompt": (params, _line_of(params, "no_such_prompt")),
    }


def test_a_broken_copy_lists_all_five_problems_with_file_and_line(config_copy: Path) -> None:
    expected = _break_suite(config_copy)
    report = validate(str(config_copy))
    rendered = [str(problem) for problem in report.problems]
    for needle, (path, line) in expected.items():
        hits = [text for text in rendered if needle in text]
        assert hits, f"no problem mentions {needle!r}: {rendered}"
        assert any(text.startswith(f"{path}:{line}: ") for text in hits), (needle, hits)


def test_duplicate_model_names_are_reported(config_copy: Path) -> None:
    params = config_copy / "configs" / "models.yaml"
    text = params.read_text(encoding="utf-8")
    text += "\n  mock-varied:\n    provider: mock\n    model: mock/varied\n"
    params.write_text(text, encoding="utf-8")
    rendered = [str(p) for p in validate(str(config_copy)).problems]
    assert any("duplicate key 'models.mock-varied'" in text for text in rendered), rendered


def test_schema_errors_in_yaml_name_the_key_and_line(config_copy: Path) -> None:
    params = config_copy / "params.yaml"
    text = params.read_text(encoding="utf-8").replace("global_limit: 16", "global_limit: -3")
    params.write_text(text, encoding="utf-8")
    rendered = [str(p) for p in validate(str(config_copy)).problems]
    line = _line_of(params, "global_limit: -3")
    assert any(t.startswith(f"{params}:{line}: runner.global_limit") for t in rendered), rendered


def test_unknown_provider_and_missing_prompt_of_a_benchmark(config_copy: Path) -> None:
    params = config_copy / "configs" / "models.yaml"
    params.write_text(
        params.read_text(encoding="utf-8").replace("provider: mock", "provider: nowhere", 1),
        encoding="utf-8",
    )
    benches = config_copy / "configs" / "benchmarks.yaml"
    benches.write_text(
        benches.read_text(encoding="utf-8").replace("prompt: greek", "prompt: gone"),
        encoding="utf-8",
    )
    rendered = "\n".join(str(p) for p in validate(str(config_copy)).problems)
    assert "unknown provider 'nowhere'" in rendered
    assert "prompt 'gone' is not defined" in rendered


def test_relative_benchmark_paths_resolve_from_the_config_root(config_copy: Path) -> None:
    report = validate(str(config_copy))
    assert report.ok, report.problems
    assert report.config is not None
    assert report.config.benchmark_path("sample_math") == config_copy / "data" / "sample_math.jsonl"


def test_model_and_benchmark_names_mlflow_cannot_take_are_refused(config_copy: Path) -> None:
    params = config_copy / "configs" / "models.yaml"
    text = params.read_text(encoding="utf-8")
    text += "\n  o'neil+v2:\n    provider: mock\n    model: mock/varied\n"
    params.write_text(text, encoding="utf-8")
    rendered = [str(p) for p in validate(str(config_copy)).problems]
    line = _line_of(params, "o'neil+v2:")
    expected = f'{params}:{line}: model name "o\'neil+v2": use only letters, digits'
    assert any(text.startswith(expected) for text in rendered), rendered
    assert not any("mock-varied" in text for text in rendered), rendered


def test_a_models_section_left_in_params_yaml_names_where_it_belongs(config_copy: Path) -> None:
    params = config_copy / "params.yaml"
    text = params.read_text(encoding="utf-8")
    params.write_text(text + "models:\n  old-style:\n    provider: mock\n", encoding="utf-8")
    rendered = [str(p) for p in validate(str(config_copy)).problems]
    lines = params.read_text(encoding="utf-8").splitlines()
    line = lines.index("models:") + 1  # the top-level key, not `run.models`
    assert any(
        t.startswith(f"{params}:{line}: ") and "configs/models.yaml" in t for t in rendered
    ), rendered


def test_model_problems_point_into_the_model_catalog(config_copy: Path) -> None:
    catalog = config_copy / "configs" / "models.yaml"
    text = catalog.read_text(encoding="utf-8").replace("seed: 11", "seed: eleven")
    catalog.write_text(text, encoding="utf-8")
    rendered = [str(p) for p in validate(str(config_copy)).problems]
    line = _line_of(catalog, "seed: eleven")
    assert any(t.startswith(f"{catalog}:{line}: models.mock-flaky.seed") for t in rendered), (
        rendered
    )


def test_a_label_holding_markup_is_refused_at_its_line(config_copy: Path) -> None:
    """A label is a name: one that opens a tag or a comment is refused; `<` and `&` in an
    ordinary name are not (the report and the plots quote every label as text)."""
    catalog = add_models(
        config_copy,
        {
            "tagged": {"provider": "mock", "model": "mock/varied",
                       "label": "Fast </script><img src=x onerror=alert(1)>"},
            "commented": {"provider": "mock", "model": "mock/varied", "label": "x <!-- y"},
            "ordinary": {"provider": "mock", "model": "mock/varied", "label": "R&D <8B> model"},
        },
    )  # fmt: skip
    rendered = [str(p) for p in validate(str(config_copy)).problems]
    for name, label in (("tagged", "Fast </script>"), ("commented", "x <!--")):
        line = _line_of(catalog, label)
        expected = f"{catalog}:{line}: model '{name}': label holds markup"
        assert any(text.startswith(expected) for text in rendered), rendered
    assert not any("ordinary" in text for text in rendered), rendered
