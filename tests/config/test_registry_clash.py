"""`llm-eval validate` refuses an extension module that takes a built-in name."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.support.cli import llm_eval

pytestmark = pytest.mark.slow  # the CLI in a subprocess, importing a copy of the package

SHADOW = """from llm_eval.scoring import AnswerKey, ScoreResult, register_scorer


@register_scorer("exact")
def always_right(response: str, key: AnswerKey) -> ScoreResult:
    return ScoreResult(correct=True, method="exact", extracted=response)
"""


def test_validate_names_both_files_of_a_shadowed_built_in_scorer(config_copy: Path) -> None:
    shutil.copytree(REPO / "src", config_copy / "src", ignore=shutil.ignore_patterns("__pycache__"))
    env = {"PYTHONPATH": str(config_copy / "src")}
    assert llm_eval("validate", cwd=config_copy, env=env).returncode == 0
    shadow = config_copy / "src" / "llm_eval" / "scoring" / "my_exact.py"
    shadow.write_text(SHADOW, encoding="utf-8")
    result = llm_eval("validate", cwd=config_copy, env=env)
    assert result.returncode == 1, result.stdout
    built_in = config_copy / "src" / "llm_eval" / "scoring" / "scorers.py"
    assert f"{shadow}:4: scorer kind 'exact' is registered twice: in {built_in}:" in result.stderr
    assert f"and in {shadow}:4" in result.stderr and "Traceback" not in result.stderr
