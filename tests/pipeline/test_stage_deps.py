"""Every module a DVC stage's command imports is among that stage's `deps` in dvc.yaml.

The closure is static: from `cli/app.py`'s module-level imports plus the stage's command
module, every `llm_eval` import (function-level ones too, since the CLI imports lazily) and
every package `__init__` on the way. A stage that misses a module would not rerun when that
module changes, and its outputs would silently lag the code.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import yaml

from llm_eval.config.run_inputs import RUN_CODE, RUN_CONFIG_FILES
from tests.conftest import REPO

SRC = REPO / "src"

COMMAND_MODULE = {
    "validate": "llm_eval.cli.validate",
    "run": "llm_eval.cli.run",
    "score": "llm_eval.cli.score",
    "report": "llm_eval.cli.report",
}

DELIBERATELY_NOT_DEPS = {
    # A `run` calls models, which costs money and time: it must not rerun when only the
    # scorer, the tables or the MLflow logging change. Its provisional verdicts (scoring) and
    # its MLflow run (tracking, which reads metrics through reporting) are redone by the
    # `score` stage, whose files are the record.
    "run": ("llm_eval/scoring", "llm_eval/tracking", "llm_eval/reporting"),
}


def module_file(name: str) -> Path | None:
    base = SRC / Path(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def imports_of(path: Path, *, top_level_only: bool) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    names: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in names if name.startswith("llm_eval") and module_file(name)}


def with_parents(name: str) -> set[str]:
    parts = name.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts) + 1)}


def closure(command_module: str) -> set[Path]:
    """Files a stage's command loads: app's top-level imports, then all the command's."""
    app = module_file("llm_eval.cli.app")
    assert app is not None
    pending = {*imports_of(app, top_level_only=True), command_module, "llm_eval.cli.app"}
    seen: set[str] = set()
    while pending:
        name = pending.pop()
        for module in with_parents(name) - seen:
            seen.add(module)
            path = module_file(module)
            if path is not None and module != "llm_eval.cli.app":
                pending |= imports_of(path, top_level_only=False) - seen
    return {path for path in map(module_file, seen) if path is not None}


def stage_deps() -> dict[str, list[str]]:
    """Each stage's deps; `run`'s code is the `RUN_CODE` digested into its run_inputs.json."""
    stages = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]
    deps = {name: list((stage.get("do") or stage)["deps"]) for name, stage in stages.items()}
    if "results/run_inputs.json" in deps["run"]:
        deps["run"] += [f"src/llm_eval/{entry}" for entry in RUN_CODE]
        deps["run"] += list(RUN_CONFIG_FILES)
    return deps


def covered(path: Path, deps: list[str]) -> bool:
    relative = path.relative_to(REPO).as_posix()
    return any(relative == dep or relative.startswith(dep.rstrip("/") + "/") for dep in deps)


@pytest.mark.parametrize("stage", sorted(COMMAND_MODULE))
def test_a_stage_depends_on_every_module_its_command_imports(stage: str) -> None:
    deps = stage_deps()[stage]
    exempt = DELIBERATELY_NOT_DEPS.get(stage, ())
    missing = sorted(
        path.relative_to(REPO).as_posix()
        for path in closure(COMMAND_MODULE[stage])
        if not covered(path, deps)
        and not any(f"/{folder}/" in path.as_posix() for folder in exempt)
    )
    assert missing == [], f"dvc.yaml stage {stage!r} misses deps: {missing}"


def test_the_check_sees_a_missing_dep() -> None:
    """The closure reaches the scorer from `score`, so dropping its folder would be caught."""
    files = closure(COMMAND_MODULE["score"])
    assert not all(covered(path, ["src/llm_eval/cli"]) for path in files)
    assert any(path.match("llm_eval/scoring/numeric.py") for path in files)


def test_a_key_fix_reaches_score_and_calls_no_model() -> None:
    """`score` grades with today's keys and scorers (data/, configs/benchmarks.yaml); `run`
    depends on what it sends, digested by `validate` without the keys, instead of on those
    files, so fixing a key reruns `score` and `report` and not `run`."""
    stages = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]
    deps = stage_deps()
    assert {"data", "configs/benchmarks.yaml"} <= set(deps["score"])
    assert "results/run_inputs.json" in deps["run"]
    assert not {"data", "configs/benchmarks.yaml", "results/validation.json"} & set(deps["run"])
    validate = stages["validate"]
    assert "--run-inputs results/run_inputs.json" in validate["cmd"]
    assert any("results/run_inputs.json" in out for out in validate["outs"])
