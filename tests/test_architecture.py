"""The package's shape: folders are pipeline stages, and nothing reaches back into the CLI."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

PACKAGE = REPO / "src" / "llm_eval"
STAGES = {"cli", "config", "flows", "providers", "reporting", "runner", "scoring", "tools",
          "tracking"}  # fmt: skip
SHARED = {"__init__.py", "errors.py", "redaction.py", "registry.py", "schemas.py", "verdicts.py"}


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_only_stage_folders_and_shared_modules_sit_at_the_top() -> None:
    top = {p.name for p in PACKAGE.iterdir() if not p.name.startswith((".", "__pycache__"))}
    assert top == STAGES | SHARED


ARCHITECTURE = REPO / "docs" / "architecture.md"


def test_the_architecture_page_names_every_top_level_folder_and_module() -> None:
    # Its table says which folder owns which decision: one row per entry at the top.
    rows = re.findall(r"^\| `([^`]+)` \|", ARCHITECTURE.read_text(encoding="utf-8"), re.M)
    assert sorted(name.rstrip("/") for name in rows) == sorted(STAGES | SHARED)


def test_every_file_the_architecture_page_names_exists() -> None:
    named = re.findall(r"`((?:[a-z_]+/)+[a-z_]+\.py)`", ARCHITECTURE.read_text(encoding="utf-8"))
    missing = [name for name in named if not (PACKAGE / name).is_file()
               and not (REPO / name).is_file()]  # fmt: skip
    assert named and missing == []


def test_no_module_outside_cli_imports_from_cli() -> None:
    offenders = [
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if path.parent.name != "cli"
        and any(name.startswith("llm_eval.cli") for name in imported_modules(path))
    ]
    assert offenders == []


def test_only_the_config_loader_reads_yaml() -> None:
    # params.yaml and configs/*.yaml have one reader: typed (`load_config`) or plain data
    # (`read_params`), both in config/loading.py on the parser of config/yaml_lines.py.
    readers = sorted(
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if imported_modules(path) & {"yaml", "llm_eval.config.yaml_lines"}
    )
    assert readers == ["config/loading.py", "config/yaml_lines.py"]


def test_list_config_console_does_not_load_the_runner() -> None:
    console = imported_modules(PACKAGE / "cli" / "console.py")
    assert not any(name.startswith("llm_eval.runner") for name in console)


def test_the_persisted_types_load_no_scoring_module() -> None:
    # In a fresh interpreter: a reader of trace rows (reports, tracking) gets the row types,
    # verdicts included, without the scoring engine.
    code = (
        "import sys, llm_eval.schemas\n"
        "print(sorted(m for m in sys.modules if m.startswith('llm_eval.')))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert result.stdout.split() == ["['llm_eval.schemas',", "'llm_eval.verdicts']"]
