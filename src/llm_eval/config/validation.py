"""The dry run behind `llm-eval validate`: every cross-reference and task file, every problem."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from llm_eval.config.loading import (
    BENCHMARKS_FILE,
    MODELS_FILE,
    PARAMS_FILE,
    PROMPTS_FILE,
    TOOLS_FILE,
    AppConfig,
    load_config,
    report_validation_error,
)
from llm_eval.config.run_inputs import question_digest
from llm_eval.config.task_files import TaskFile, read_task_file
from llm_eval.errors import ConfigError, Problem
from llm_eval.flows.registry import flow_names
from llm_eval.providers.registry import provider_class, provider_names
from llm_eval.redaction import has_url_credentials
from llm_eval.registry import RegistryError
from llm_eval.schemas import ToolCallingTask
from llm_eval.scoring import SCORER_KINDS
from llm_eval.tools.registry import registered_tool_names, tool_settings


@dataclass
class ValidationReport:
    """Outcome of a dry run: the config (if it loaded), task counts and every problem."""

    config: AppConfig | None
    task_counts: dict[str, int] = field(default_factory=dict)
    categories: dict[str, frozenset[str]] = field(default_factory=dict)
    """The task categories of each benchmark, for `--include` / `--exclude`."""
    questions: dict[str, dict[str, str]] = field(default_factory=dict)
    """Each benchmark's task ids and question digests, to find rows made from older files."""
    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    """Things that work but are risky (a regex prone to catastrophic backtracking)."""

    @property
    def ok(self) -> bool:
        return not self.problems


def validate(root: str = ".") -> ValidationReport:
    """Load the config under `root` and check everything `validate` promises; never raises."""
    clashes = _registry_problems()
    try:
        config = load_config(root)
    except ConfigError as exc:
        return ValidationReport(None, problems=[*clashes, *exc.problems])
    if clashes:  # every other check reads the registries
        return ValidationReport(None, problems=clashes)
    report = ValidationReport(config)
    report.problems.extend(_duplicate_keys(config))
    report.problems.extend(_name_problems(config))
    report.problems.extend(_model_problems(config))
    report.problems.extend(_label_problems(config))
    report.problems.extend(_selection_problems(config))
    report.problems.extend(_benchmark_problems(config))
    report.problems.extend(_tool_settings_problems(config))
    report.warnings.extend(_outside_root_warnings(config))
    for name in config.benchmarks:
        task_file = read_task_file(
            config.benchmark_path(name), expected_type=config.benchmarks[name].task_type
        )
        report.task_counts[name] = len(task_file.tasks)
        report.categories[name] = frozenset(loaded.task.category for loaded in task_file.tasks)
        report.questions[name] = {t.task.id: question_digest(t.task) for t in task_file.tasks}
        report.problems.extend(task_file.problems)
        report.warnings.extend(_regex_warnings(task_file))
        report.problems.extend(_expected_tool_problems(config, task_file))
    return report


def _problem(config: AppConfig, source: str, keys: tuple[str, ...], message: str) -> Problem:
    path, line = config.locate(source, *keys)
    return Problem(path, line, message)


def _duplicate_keys(config: AppConfig) -> list[Problem]:
    return [
        Problem(str(located.path), line, f"duplicate key {'.'.join(map(str, key_path))!r}")
        for located in config.sources.values()
        for key_path, line in located.duplicates
    ]


NAME_RE = re.compile(r"[A-Za-z0-9_-]+")
"""What a model or benchmark name may hold: it becomes an MLflow tag value, a run name, a
filter string, an artifact name, a DVC parameter key and a file name, and these characters
are safe in all of them (a quote, `+`, `/` or `.` is not)."""


def _name_problems(config: AppConfig) -> list[Problem]:
    problems = []
    for kind, source, names in (
        ("model", MODELS_FILE, config.models),
        ("benchmark", BENCHMARKS_FILE, config.benchmarks),
    ):
        section = "models" if kind == "model" else "benchmarks"
        problems += [
            _problem(
                config,
                source,
                (section, name),
                f"{kind} name {name!r}: use only letters, digits, '_' and '-' "
                "(the name is an MLflow key and a file name)",
            )
            for name in names
            if not NAME_RE.fullmatch(name)
        ]
    return problems


def _model_problems(config: AppConfig) -> list[Problem]:
    problems: list[Problem] = []
    for name, model in config.models.items():
        if model.provider not in provider_names():
            problems.append(
                _problem(
                    config,
                    MODELS_FILE,
                    ("models", name, "provider"),
                    f"model {name!r}: unknown provider {model.provider!r} "
                    f"(known: {', '.join(provider_names())})",
                )
            )
        if model.prompt is not None and model.prompt not in config.prompts:
            problems.append(
                _problem(
                    config,
                    MODELS_FILE,
                    ("models", name, "prompt"),
                    f"model {name!r}: prompt {model.prompt!r} is not defined in {PROMPTS_FILE}",
                )
            )
        if model.api_base and has_url_credentials(model.api_base):
            problems.append(
                _problem(
                    config,
                    MODELS_FILE,
                    ("models", name, "api_base"),
                    f"model {name!r}: api_base holds a user name or password, which would be "
                    "sent in clear and stored with the settings; remove it and put the key in "
                    "an environment variable named by api_key_env",
                )
            )
        if model.provider in provider_names():
            for key, message in provider_class(model.provider).config_problems(model):
                keys = ("models", name, key) if key else ("models", name)
                problems.append(_problem(config, MODELS_FILE, keys, f"model {name!r}: {message}"))
    return problems


MARKUP_RE = re.compile(r"<[A-Za-z/!?]")
"""What HTML reads as the start of a tag, an end tag, a comment or a declaration. `<` before
anything else (`<8B`, `a < b`) and `&` stay allowed in a label."""


def _label_problems(config: AppConfig) -> list[Problem]:
    """Labels that hold markup: reports and plots quote a label as text, but a label is a
    name, and one that opens a tag is a mistake or an attack on a page that shows it."""
    return [
        _problem(
            config,
            MODELS_FILE,
            ("models", name, "label"),
            f"model {name!r}: label holds markup ({found.group(0)!r}): write it without "
            "'<' before a letter, '/', '!' or '?'",
        )
        for name, model in config.models.items()
        if model.label and (found := MARKUP_RE.search(model.label))
    ]


def _selection_problems(config: AppConfig) -> list[Problem]:
    problems = [
        _problem(config, PARAMS_FILE, ("run", "models", str(i)), f"run.models: unknown model {m!r}")
        for i, m in enumerate(config.run.models)
        if m not in config.models
    ]
    problems += [
        _problem(
            config, PARAMS_FILE, ("run", "benchmarks"), f"run.benchmarks: unknown benchmark {b!r}"
        )
        for b in config.run.benchmarks
        if b not in config.benchmarks
    ]
    return problems


def _registry_problems() -> list[Problem]:
    """Extension modules that fail to import or take a name another file registered."""
    problems: list[Problem] = []
    readers: tuple[Callable[[], object], ...] = (
        SCORER_KINDS.names, flow_names, provider_names, registered_tool_names,
    )  # fmt: skip
    for names in readers:
        try:
            names()
        except RegistryError as exc:
            problems.append(exc.problem or Problem("src/llm_eval", None, str(exc)))
    return problems


def _benchmark_problems(config: AppConfig) -> list[Problem]:
    problems: list[Problem] = []
    available = set(registered_tool_names())
    scorers, flows = sorted(SCORER_KINDS), flow_names()
    for name, bench in config.benchmarks.items():
        where = ("benchmarks", name)
        if bench.scorer not in scorers:
            problems.append(
                _problem(
                    config,
                    BENCHMARKS_FILE,
                    (*where, "scorer"),
                    f"benchmark {name!r}: unknown scorer {bench.scorer!r} "
                    f"(registered: {', '.join(scorers)})",
                )
            )
        if bench.resolved_flow not in flows:
            problems.append(
                _problem(
                    config,
                    BENCHMARKS_FILE,
                    (*where, "flow"),
                    f"benchmark {name!r}: unknown flow {bench.resolved_flow!r} "
                    f"(registered: {', '.join(flows)})",
                )
            )
        prompt = config.prompts.get(bench.prompt)
        if prompt is None:
            problems.append(
                _problem(
                    config,
                    BENCHMARKS_FILE,
                    (*where, "prompt"),
                    f"benchmark {name!r}: prompt {bench.prompt!r} is not defined in {PROMPTS_FILE}",
                )
            )
        elif bench.resolved_flow == "multi_round" and not prompt.followups:
            problems.append(
                _problem(
                    config,
                    BENCHMARKS_FILE,
                    (*where, "flow"),
                    f"benchmark {name!r}: multi_round needs followups in prompt {bench.prompt!r}",
                )
            )
        if bench.resolved_flow == "tool_loop" and not bench.tools:
            problems.append(
                _problem(
                    config,
                    BENCHMARKS_FILE,
                    where,
                    f"benchmark {name!r}: a tool_calling benchmark must list `tools`",
                )
            )
        for tool in bench.tools:
            message = _tool_unavailable(config, tool, available)
            if message:
                problems.append(
                    _problem(
                        config, BENCHMARKS_FILE, (*where, "tools"), f"benchmark {name!r}: {message}"
                    )
                )
    return problems


def _tool_settings_problems(config: AppConfig) -> list[Problem]:
    """Each registered tool's entry, read by the tool's own settings model."""
    problems: list[Problem] = []
    registered = set(registered_tool_names())
    for name, entry in config.tools.items():
        if name in registered:
            try:
                tool_settings(name, entry)
            except ValidationError as exc:
                report_validation_error(
                    exc, config.sources.get(TOOLS_FILE), ("tools", name), problems
                )
    return problems


def _tool_unavailable(config: AppConfig, tool: str, registered: set[str]) -> str | None:
    if tool not in registered:
        return f"tool {tool!r} is not registered (known: {', '.join(sorted(registered))})"
    settings = config.tools.get(tool)
    if settings is None:
        return f"tool {tool!r} is not configured in {TOOLS_FILE}"
    if not settings.enabled:
        return f"tool {tool!r} is disabled in {TOOLS_FILE}"
    return None


def _expected_tool_problems(config: AppConfig, task_file: TaskFile) -> list[Problem]:
    registered = set(registered_tool_names())
    problems: list[Problem] = []
    for loaded in task_file.tasks:
        if not isinstance(loaded.task, ToolCallingTask):
            continue
        for tool in loaded.task.expected_tools:
            message = _tool_unavailable(config, tool, registered)
            if message:
                problems.append(
                    Problem(str(task_file.path), loaded.line, f"task {loaded.task.id!r}: {message}")
                )
    return problems


def validation_summary(report: ValidationReport) -> dict[str, Any]:
    """What `validate --json` writes: the suite's shape and every problem, no absolute path.

    Only the static suite (configs/ and data/) goes in, so the file changes only when they do
    and the `run` stages that depend on it do not rerun for a model-settings change.
    """
    config = report.config
    benchmarks: dict[str, Any] = {}
    active: list[str] = []
    if config is not None:
        active = config.active_benchmarks()
        for name, bench in config.benchmarks.items():
            benchmarks[name] = {
                "tasks": report.task_counts.get(name, 0),
                "task_type": bench.task_type,
                "scorer": bench.scorer,
                "active": bench.active,
            }
    root = str(config.root) + "/" if config is not None else ""
    return {
        "ok": report.ok,
        "problems": [
            str(problem).replace(root, "") if root else str(problem) for problem in report.problems
        ],  # fmt: skip
        "benchmarks": benchmarks,
        "active_benchmarks": active,
        "active_tasks": sum(report.task_counts.get(name, 0) for name in active),
        "prompts": sorted(config.prompts) if config is not None else [],
        "tools": sorted(config.tools) if config is not None else [],
    }


# A group that repeats and holds a repeat itself, "(a+)+", "(\\w*)*", "(x|y+){2,}": the
# shape behind catastrophic backtracking. Scoring time-bounds every search anyway.
_NESTED_QUANTIFIER_RE = re.compile(r"\((?:[^()\\]|\\.)*[+*}](?:[^()\\]|\\.)*\)(?:[+*]|\{\d*,)")


def _regex_warnings(task_file: TaskFile) -> list[Problem]:
    return [
        Problem(
            str(task_file.path),
            loaded.line,
            f"task {loaded.task.id!r}: answer_regex {loaded.task.answer_regex!r} nests a "
            "repeat inside a repeat and may backtrack catastrophically (searches are cut off "
            "after 50 ms)",
        )
        for loaded in task_file.tasks
        if loaded.task.answer_regex and _NESTED_QUANTIFIER_RE.search(loaded.task.answer_regex)
    ]


def _outside_root_warnings(config: AppConfig) -> list[Problem]:
    """Task files outside the config root are not versioned with it (nor seen by DVC)."""
    root = config.root.resolve()
    warnings: list[Problem] = []
    for name in config.benchmarks:
        path = config.benchmark_path(name).resolve()
        if not path.is_relative_to(root):
            warnings.append(
                _problem(
                    config,
                    BENCHMARKS_FILE,
                    ("benchmarks", name, "path"),
                    f"benchmark {name!r}: task file {path} is outside the config root {root}; "
                    "DVC and git will not track it with the suite",
                )
            )
    return warnings
