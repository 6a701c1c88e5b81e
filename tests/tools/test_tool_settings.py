"""Each tool owns its settings: python_exec's sandbox limits are python_exec's alone."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from llm_eval.cli.console import print_config
from llm_eval.config.loading import load_config
from llm_eval.config.validation import validate
from llm_eval.schemas import ToolConfig
from llm_eval.tools import ToolOutcome, ToolRegistry, register_tool
from llm_eval.tools.python_exec import PythonExecConfig
from llm_eval.tools.registry import _TOOLS, NoSettings, tool_settings

CHAR_COUNT: dict[str, Any] = {
    "type": "function",
    "function": {"name": "char_count", "parameters": {"type": "object", "properties": {}}},
}


@pytest.fixture()
def char_count() -> Iterator[list[ToolConfig]]:
    """A registered tool with no settings of its own; yields the settings each call got."""
    seen: list[ToolConfig] = []

    @register_tool("char_count", CHAR_COUNT)
    async def count(arguments: dict[str, Any], settings: ToolConfig) -> ToolOutcome:
        seen.append(settings)
        return ToolOutcome(str(len(str(arguments.get("text", "")))))

    try:
        yield seen
    finally:
        del _TOOLS["char_count"]


def test_list_config_shows_each_tool_its_own_settings(
    config_copy: Path, char_count: list[ToolConfig], capsys: pytest.CaptureFixture[str]
) -> None:
    config = load_config(config_copy)
    config.tools["char_count"] = ToolConfig()
    print_config(config, {})
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()
            if line.split()[:1] in (["python_exec"], ["char_count"])}  # fmt: skip
    assert "memory_mb 1024" in rows["python_exec"] and "timeout_s 20.0" in rows["python_exec"]
    assert "memory" not in rows["char_count"] and "timeout" not in rows["char_count"]


async def test_each_tool_is_run_with_its_own_settings_model(char_count: list[ToolConfig]) -> None:
    registry = ToolRegistry({"char_count": ToolConfig(), "python_exec": ToolConfig(timeout_s=5)})
    record = await registry.execute("c1", "char_count", '{"text": "abc"}', offered=["char_count"])
    assert record.result == "3" and type(char_count[0]) is NoSettings
    assert tool_settings("python_exec", ToolConfig(timeout_s=5)) == PythonExecConfig(timeout_s=5)


def test_a_key_python_exec_does_not_know_is_reported_at_its_line(config_copy: Path) -> None:
    tools = config_copy / "configs" / "tools.yaml"
    text = tools.read_text(encoding="utf-8")
    tools.write_text(text.replace("    memory_mb: 1024\n", "    memory_mib: 1024\n"), "utf-8")
    line = tools.read_text(encoding="utf-8").splitlines().index("    memory_mib: 1024") + 1
    problems = [str(problem) for problem in validate(str(config_copy)).problems]
    assert f"{tools}:{line}: tools.python_exec.memory_mib: Extra inputs are not permitted" in (
        problems
    )


def test_a_tool_without_settings_of_its_own_refuses_any_other_key(
    config_copy: Path, char_count: list[ToolConfig]
) -> None:
    tools = config_copy / "configs" / "tools.yaml"
    text = tools.read_text(encoding="utf-8")
    tools.write_text(text + "  char_count:\n    enabld: true\n", encoding="utf-8")
    line = len(tools.read_text(encoding="utf-8").splitlines())
    problems = [str(problem) for problem in validate(str(config_copy)).problems]
    assert f"{tools}:{line}: tools.char_count.enabld: Extra inputs are not permitted" in problems
