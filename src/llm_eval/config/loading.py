"""Load `params.yaml` and `configs/*.yaml` from a config root into typed, located config.

The models live in `configs/models.yaml`, not in `params.yaml`: DVC's `exp show` lists every
key of the default params file, while from any other params file it lists only the keys a
stage depends on, so a model the pipeline does not run stays out of its table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from llm_eval.config.yaml_lines import KeyPath, LocatedYaml, load_located_yaml
from llm_eval.errors import ConfigError, Problem
from llm_eval.schemas import (
    BenchmarkConfig,
    ModelConfig,
    PromptConfig,
    RunnerConfig,
    RunSelection,
    ToolConfig,
    TrackingConfig,
)

PARAMS_FILE = "params.yaml"
BENCHMARKS_FILE = "configs/benchmarks.yaml"
PROMPTS_FILE = "configs/prompts.yaml"
TOOLS_FILE = "configs/tools.yaml"
MODELS_FILE = "configs/models.yaml"

M = TypeVar("M", bound=BaseModel)


@dataclass
class AppConfig:
    """The whole suite definition, plus where each piece came from."""

    root: Path
    models: dict[str, ModelConfig]
    runner: RunnerConfig
    run: RunSelection
    tracking: TrackingConfig
    benchmarks: dict[str, BenchmarkConfig]
    prompts: dict[str, PromptConfig]
    tools: dict[str, ToolConfig]
    sources: dict[str, LocatedYaml] = field(default_factory=dict)

    def resolve(self, relative: str) -> Path:
        """Resolve a path from a config file against the config root; absolute stays absolute."""
        path = Path(relative)
        return path if path.is_absolute() else self.root / path

    def benchmark_path(self, name: str) -> Path:
        """The task file of benchmark `name`."""
        return self.resolve(self.benchmarks[name].path)

    def locate(self, source: str, *keys: str | int) -> tuple[str, int | None]:
        """(file, line) of a key path inside one of the loaded files."""
        located = self.sources.get(source)
        display = str(self.root / source)
        return display, located.line_of(*keys) if located else None

    def active_benchmarks(self) -> list[str]:
        """Benchmarks of the default suite, in file order."""
        return [name for name, bench in self.benchmarks.items() if bench.active]


def load_config(root: Path | str = ".") -> AppConfig:
    """Load and type-check every config file under `root`; raise ConfigError with all problems."""
    root = Path(root).resolve()
    problems: list[Problem] = []
    sources = {
        name: located
        for name in (PARAMS_FILE, MODELS_FILE, BENCHMARKS_FILE, PROMPTS_FILE, TOOLS_FILE)
        if (located := _read(root, name, problems)) is not None
    }
    params = sources.get(PARAMS_FILE)
    if params is not None and "models" in params.data:
        problems.append(
            Problem(
                str(params.path),
                params.line_of("models"),
                f"`models` belongs in {MODELS_FILE}; move the section there "
                "(params.yaml keeps `run`, `runner` and `tracking`)",
            )
        )
    config = AppConfig(
        root=root,
        models=_entries(sources.get(MODELS_FILE), "models", ModelConfig, problems),
        runner=_section(params, "runner", RunnerConfig, problems),
        run=_section(params, "run", RunSelection, problems),
        tracking=_section(params, "tracking", TrackingConfig, problems),
        benchmarks=_entries(sources.get(BENCHMARKS_FILE), "benchmarks", BenchmarkConfig, problems),
        prompts=_entries(sources.get(PROMPTS_FILE), "prompts", PromptConfig, problems),
        tools=_entries(sources.get(TOOLS_FILE), "tools", ToolConfig, problems),
        sources=sources,
    )
    if problems:
        raise ConfigError(problems)
    return config


def _read(root: Path, name: str, problems: list[Problem]) -> LocatedYaml | None:
    path = root / name
    if not path.is_file():
        problems.append(Problem(str(path), None, "file not found"))
        return None
    try:
        located = load_located_yaml(path)
    except OSError as exc:
        problems.append(Problem(str(path), None, f"cannot be read: {exc.strerror or exc}"))
        return None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else getattr(exc, "line", None)
        problems.append(Problem(str(path), line, f"invalid YAML: {getattr(exc, 'problem', exc)}"))
        return None
    if not isinstance(located.data, dict):
        problems.append(Problem(str(path), 1, "expected a mapping at the top level"))
        return None
    return located


def _section(source: LocatedYaml | None, key: str, schema: type[M], problems: list[Problem]) -> M:
    """Validate one mapping section; a missing section takes the schema defaults."""
    raw = source.data.get(key, {}) if source is not None else {}
    try:
        return schema.model_validate(raw or {})
    except ValidationError as exc:
        report_validation_error(exc, source, (key,), problems)
        return schema.model_construct()


def _entries(
    source: LocatedYaml | None, key: str, schema: type[M], problems: list[Problem]
) -> dict[str, M]:
    """Validate a `name -> entry` mapping, collecting every entry's problems."""
    if source is None:
        return {}
    raw = source.data.get(key)
    if not isinstance(raw, dict):
        problems.append(
            Problem(str(source.path), source.line_of(key) or 1, f"`{key}` must be a mapping")
        )
        return {}
    entries: dict[str, M] = {}
    for name, value in raw.items():
        _check_name(source, key, str(name), problems)
        try:
            entries[str(name)] = schema.model_validate(value or {})
        except ValidationError as exc:
            report_validation_error(exc, source, (key, name), problems)
    return entries


def _check_name(source: LocatedYaml, key: str, name: str, problems: list[Problem]) -> None:
    # DVC parameter keys are dot paths, so `models.a.b` would be ambiguous.
    if "." in name or not name.strip():
        line = source.line_of(key, name)
        problems.append(
            Problem(str(source.path), line, f"{key} name {name!r} must not contain '.'")
        )


def report_validation_error(
    exc: ValidationError, source: LocatedYaml | None, prefix: KeyPath, problems: list[Problem]
) -> None:
    """Add one problem per error of `exc`, at the line of its key under `prefix`."""
    path = str(source.path) if source else "?"
    for error in exc.errors():
        loc = tuple(error["loc"])
        line = source.line_of(*prefix, *loc) if source else None
        dotted = ".".join(str(part) for part in (*prefix, *loc))
        problems.append(Problem(path, line, f"{dotted}: {error['msg']}"))


def read_params(root: Path | str = ".") -> dict[str, Any] | None:
    """params.yaml as plain data with configs/models.yaml's `models` folded in, as DVC and
    MLflow name them (`models.<name>.<key>`); None when params.yaml is missing or broken.

    The one plain-data reader of the two files (tracking, DVC glue), through the same
    `_read` as `load_config`; a missing or broken models file folds in no models.
    """
    unused: list[Problem] = []  # `validate` reports them; a reader of plain data does not
    params = _read(Path(root), PARAMS_FILE, unused)
    if params is None:
        return None
    models = _read(Path(root), MODELS_FILE, unused)
    entries = models.data.get("models") if models is not None else None
    return {**params.data, "models": entries if isinstance(entries, dict) else {}}


def raw_params(root: Path | str = ".") -> dict[str, Any]:
    """`read_params`, {} when params.yaml is missing or broken."""
    return read_params(root) or {}
