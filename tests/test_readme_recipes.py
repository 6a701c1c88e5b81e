"""The README's "Add a scorer / tool / flow / provider" recipes, run exactly as written.

Each recipe's code block is executed, and what it registered is then used through the real
path: `validate` on a config that names it, and a run of the `EvaluationRunner`.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from llm_eval.config.loading import load_config
from llm_eval.config.validation import validate
from llm_eval.flows.registry import FLOWS, flow_names
from llm_eval.providers.registry import _PROVIDERS, provider_names
from llm_eval.providers.scripted import ScriptedProvider
from llm_eval.runner.runner import EvaluationRunner, TaskFilter
from llm_eval.runner.trace_io import read_rows
from llm_eval.schemas import ModelConfig
from llm_eval.scoring import SCORER_KINDS, score_text
from llm_eval.tools.registry import _TOOLS
from tests.conftest import REPO


def recipe(heading: str) -> str:
    """The first ```python block under `### <heading>` in the README."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split(f"### {heading}\n", 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, f"no python block under {heading!r}"
    return match.group(1)


@pytest.fixture()
def registered() -> Iterator[dict[str, Any]]:
    """Run a recipe in a fresh namespace; undo its registrations afterwards."""
    provider_names(), flow_names()  # load the built-ins before taking the snapshot
    before = (dict(SCORER_KINDS), dict(_TOOLS), dict(FLOWS), dict(_PROVIDERS))
    namespace: dict[str, Any] = {}
    yield namespace
    for registry, saved in zip((SCORER_KINDS, _TOOLS, FLOWS, _PROVIDERS), before, strict=True):
        registry.clear()
        registry.update(saved)  # type: ignore[arg-type]


def edit_yaml(path: Path, change: Any) -> None:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")


def run_one(root: Path, benchmark: str, provider: ScriptedProvider, out: Path) -> list[Any]:
    runner = EvaluationRunner(
        load_config(root), ["mock-varied"], [benchmark], out,
        task_filter=TaskFilter(limit=1), use_cache=False,
        provider_factory=lambda _model: provider,
    )  # fmt: skip
    asyncio.run(runner.run())
    return read_rows(out)


def scripted(*outputs: Any) -> ScriptedProvider:
    return ScriptedProvider(ModelConfig(provider="scripted", model="s"), outputs)


def test_the_scorer_recipe(registered: dict[str, Any], config_copy: Path, tmp_path: Path) -> None:
    exec(recipe("Add a scorer"), registered)
    assert score_text("thinking...\n42", "42", kind="last_line_exact").correct
    assert not score_text("42\nthinking...", "42", kind="last_line_exact").correct
    bench = config_copy / "configs" / "benchmarks.yaml"
    edit_yaml(bench, lambda d: d["benchmarks"]["sample_math"].update(scorer="last_line_exact"))
    assert validate(str(config_copy)).ok
    rows = run_one(config_copy, "sample_math", scripted("Final answer: 42"), tmp_path / "t.jsonl")
    assert rows[0].score is not None and rows[0].score.method == "last_line_exact"


def test_the_tool_recipe(registered: dict[str, Any], config_copy: Path, tmp_path: Path) -> None:
    exec(recipe("Add a tool"), registered)
    edit_yaml(config_copy / "configs" / "tools.yaml",
              lambda d: d["tools"].update(word_count={"enabled": True}))  # fmt: skip
    edit_yaml(config_copy / "configs" / "benchmarks.yaml",
              lambda d: d["benchmarks"]["sample_tools"].update(tools=["word_count"]))  # fmt: skip
    assert validate(str(config_copy)).ok
    from llm_eval.providers.base import ChatResponse, ToolCall

    call = ToolCall("c1", "word_count", '{"text": "ένα δύο τρία"}')
    provider = scripted(ChatResponse(content="", tool_calls=[call]), "Final answer: 3")
    rows = run_one(config_copy, "sample_tools", provider, tmp_path / "t.jsonl")
    assert rows[0].tool_calls[0].name == "word_count" and rows[0].tool_calls[0].result == "3"


def test_the_flow_recipe(registered: dict[str, Any], config_copy: Path, tmp_path: Path) -> None:
    exec(recipe("Add a flow"), registered)
    edit_yaml(config_copy / "configs" / "benchmarks.yaml",
              lambda d: d["benchmarks"]["sample_math"].update(flow="answer_twice"))  # fmt: skip
    assert validate(str(config_copy)).ok
    provider = scripted("Let me think: 41?", "Final answer: 42")
    rows = run_one(config_copy, "sample_math", provider, tmp_path / "t.jsonl")
    assert len(rows[0].calls) == 2 and rows[0].response == "Final answer: 42"


def test_the_provider_recipe(registered: dict[str, Any], config_copy: Path) -> None:
    exec(recipe("Add a provider"), registered)
    loud = {"provider": "shouting", "model": "x/y"}
    edit_yaml(config_copy / "params.yaml", lambda d: d["models"].update(loud=loud))
    assert validate(str(config_copy)).ok
    from llm_eval.providers.registry import create_provider

    provider = create_provider(load_config(config_copy).models["loud"])
    from llm_eval.providers.base import ChatRequest

    model = ModelConfig(provider="shouting", model="x/y")
    request = ChatRequest("loud", model, [{"role": "user", "content": "γεια"}], None, 8, 5.0)
    assert asyncio.run(provider.complete(request)).content == "ΓΕΙΑ"
