"""The README's "Extending the suite" recipes, applied as a user would and run for real.

Each block is written into the file it names (or merged under the key it names) in a copy of
the repository, and `llm-eval` is run in that copy with the copy's `src` first on the path:
the new modules are found by the registries alone, then used by real runs (the scorer scores,
the tool is called, the flow drives two calls, the provider answers, the model entry talks
to a real OpenAI-compatible server on 127.0.0.1).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from llm_eval.runner.trace_io import read_rows
from llm_eval.schemas import TraceRow
from tests.conftest import REPO
from tests.support.cli import llm_eval
from tests.support.openai_stub import Body, start_stub

pytestmark = pytest.mark.slow  # CLI subprocesses in a copy of the repository

# "In `PATH` (a new file):" or "In `PATH`, under `KEY:`:", a blank line, then the block.
_RECIPE = re.compile(
    r"^In `(?P<path>[^`]+)`(?: \(a new file\)|, under `(?P<key>\w+):`):\n\n"
    r"```\w+\n(?P<body>.*?)^```",
    re.M | re.S,
)
LOCAL_API_BASE = "http://127.0.0.1:8000/v1"


@dataclass(frozen=True)
class Recipe:
    """One README block and where it goes."""

    path: str
    under: str | None
    body: str


def readme_recipes() -> list[Recipe]:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Extending the suite\n", 1)[1].split("\n## ", 1)[0]
    return [Recipe(m["path"], m["key"], m["body"]) for m in _RECIPE.finditer(section)]


def apply(recipe: Recipe, root: Path) -> None:
    target = root / recipe.path
    if recipe.under is None:
        assert not target.exists(), f"{recipe.path} is not a new file"
        target.write_text(recipe.body, encoding="utf-8")
        return
    fragment = yaml.safe_load(recipe.body)
    edit_yaml(target, lambda data: data[recipe.under].update(fragment))


def edit_yaml(path: Path, change: Callable[[Any], object]) -> None:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")


@pytest.fixture(scope="module")
def extended(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the repository's package and suite with every recipe applied."""
    root = tmp_path_factory.mktemp("extended")
    shutil.copytree(REPO / "src", root / "src", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "configs", root / "configs")
    shutil.copytree(REPO / "data", root / "data")
    shutil.copy(REPO / "params.yaml", root / "params.yaml")
    for recipe in readme_recipes():
        apply(recipe, root)
    return root


@pytest.fixture()
def project(extended: Path, tmp_path: Path) -> Path:
    """A private copy of `extended` that one test may edit further."""
    return Path(shutil.copytree(extended, tmp_path / "project"))


def in_copy(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`llm-eval ARGS` run in `root`, importing `llm_eval` from the copy's `src`."""
    return llm_eval(*args, cwd=root, env={"PYTHONPATH": str(root / "src")})


def python_in_copy(root: Path, code: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=root, env=_env(root), capture_output=True,
        text=True, timeout=300, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def _env(root: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(root / "src"), "LLM_EVAL_TRACKING": "0"}


def run_rows(root: Path, model: str, benchmark: str, *extra: str) -> list[TraceRow]:
    out = root / "results" / f"{model}-{benchmark}.jsonl"
    result = in_copy(root, "run", "--model", model, "--benchmark", benchmark, "--no-cache",
                     "--output", str(out), *extra)  # fmt: skip
    assert result.returncode == 0, result.stderr
    return read_rows(out)


def point_local_model_at(root: Path, base_url: str) -> None:
    params = root / "configs" / "models.yaml"
    text = params.read_text(encoding="utf-8")
    assert LOCAL_API_BASE in text
    params.write_text(text.replace(LOCAL_API_BASE, base_url), encoding="utf-8")


def set_benchmark(root: Path, name: str, **settings: Any) -> None:
    edit_yaml(root / "configs" / "benchmarks.yaml",
              lambda d: d["benchmarks"][name].update(settings))  # fmt: skip


def test_every_recipe_names_a_file_and_the_copy_is_what_runs(extended: Path) -> None:
    paths = {recipe.path for recipe in readme_recipes()}
    assert paths == {
        "data/capitals.jsonl", "configs/benchmarks.yaml", "configs/models.yaml",
        "src/llm_eval/scoring/last_line.py", "src/llm_eval/tools/word_count.py",
        "configs/tools.yaml", "src/llm_eval/flows/answer_twice.py",
        "src/llm_eval/providers/shouting.py",
    }  # fmt: skip
    imported_from = python_in_copy(extended, "import llm_eval; print(llm_eval.__file__)")
    assert Path(imported_from).is_relative_to(extended / "src")


def test_validate_and_list_config_see_every_recipe(extended: Path) -> None:
    validated = in_copy(extended, "validate")
    assert validated.returncode == 0, validated.stdout + validated.stderr
    listed = in_copy(extended, "list-config")
    assert listed.returncode == 0, listed.stderr
    for name in ("capitals", "my-local-model", "word_count"):
        assert name in listed.stdout


def capital_answers(body: Body) -> str:
    conversation = " ".join(str(message["content"]) for message in body["messages"])
    return "Athens" if "Greece" in conversation else "Larnaca"


def test_the_benchmark_and_model_recipes_run_against_a_local_server(project: Path) -> None:
    with start_stub(answer_fn=capital_answers) as stub:
        point_local_model_at(project, stub.base_url)
        rows = run_rows(project, "my-local-model", "capitals")
        models = {body["model"] for body in stub.requests}
    assert sorted((row.task_id, row.status) for row in rows) == [
        ("capital_001", "correct"),
        ("capital_002", "incorrect"),
    ]
    assert models == {"my-model"}


def test_the_scorer_recipe_scores(project: Path) -> None:
    verdicts = python_in_copy(project, (
        "from llm_eval.scoring import score_text\n"
        "print(score_text('thinking...\\nAthens', 'Athens', kind='last_line_exact').correct,"
        " score_text('Athens\\nthinking...', 'Athens', kind='last_line_exact').correct)"
    ))  # fmt: skip
    assert verdicts == "True False"
    set_benchmark(project, "capitals", scorer="last_line_exact")
    rows = run_rows(project, "mock-varied", "capitals")
    assert rows and {row.score.method for row in rows if row.score} == {"last_line_exact"}


def test_the_tool_recipe_is_offered_and_called(project: Path) -> None:
    counted = python_in_copy(project, (
        "import asyncio\nfrom llm_eval.schemas import ToolConfig\n"
        "from llm_eval.tools import ToolRegistry\n"
        "tools = ToolRegistry({'word_count': ToolConfig(enabled=True)})\n"
        "call = tools.execute('c1', 'word_count', '{\"text\": \"ένα δύο τρία\"}',\n"
        "                     offered=['word_count'])\n"
        "record = asyncio.run(call)\n"
        "print(record.result)"
    ))  # fmt: skip
    assert counted == "3"
    set_benchmark(project, "sample_tools", tools=["word_count"])
    with start_stub() as stub:  # it calls the first tool it is offered, then echoes the result
        point_local_model_at(project, stub.base_url)
        rows = run_rows(project, "my-local-model", "sample_tools", "--limit", "1")
        offered = [tool["function"]["name"] for tool in stub.requests[0]["tools"]]
    assert offered == ["word_count"]
    call = rows[0].tool_calls[0]
    assert (call.name, call.error, call.result) == ("word_count", None, "0")


def test_the_flow_recipe_drives_two_calls(project: Path) -> None:
    set_benchmark(project, "capitals", flow="answer_twice")
    with start_stub(answer_fn=capital_answers) as stub:
        point_local_model_at(project, stub.base_url)
        rows = run_rows(project, "my-local-model", "capitals", "--limit", "1")
        last_messages = [body["messages"][-1]["content"] for body in stub.requests]
    assert len(rows[0].calls) == 2 and rows[0].status == "correct"
    assert last_messages[1] == "Answer only."


def test_the_provider_recipe_answers_a_run(project: Path) -> None:
    loud = {"provider": "shouting", "model": "shouting/plain", "label": "Shouting"}
    edit_yaml(project / "configs" / "models.yaml", lambda d: d["models"].update(loud=loud))
    assert in_copy(project, "validate").returncode == 0
    rows = run_rows(project, "loud", "capitals")
    responses = {row.task_id: (row.status, row.response) for row in rows}
    status, response = responses["capital_001"]
    assert status == "incorrect" and "WHAT IS THE CAPITAL OF GREECE?" in (response or "")


def test_a_broken_extension_module_is_one_line_naming_its_file(project: Path) -> None:
    broken = project / "src" / "llm_eval" / "scoring" / "broken.py"
    broken.write_text("from llm_eval.scoring import no_such_name\n", encoding="utf-8")
    result = in_copy(project, "validate")
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    # One problem line naming the file and the error, as validate reports any problem.
    lines = result.stderr.strip().splitlines()
    assert str(broken) in lines[0] and "no_such_name" in lines[0]
    assert lines[1:] == ["validation failed: 1 problem(s)"]
