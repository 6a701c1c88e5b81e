"""`llm-eval run`: apply and validate overrides, check keys, run, summarise, exit code."""

from __future__ import annotations

import asyncio
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from llm_eval.config.loading import AppConfig
from llm_eval.errors import ConfigError, UsageError
from llm_eval.schemas import ModelConfig, RunnerConfig

_OPTION_OF = {
    "max_attempts": "--max-attempts",
    "request_timeout_s": "--request-timeout",
    "task_timeout_s": "--task-timeout",
    "global_limit": "--global-limit",
    "per_model_limit": "--per-model-limit",
    "fail_on_error": "--fail-on-error",
    "max_tokens": "--max-tokens",
}


@dataclass
class RunOptions:
    """Everything `run` was asked to do, before it is checked."""

    models: list[str] = field(default_factory=list)
    benchmarks: list[str] = field(default_factory=list)
    mock: bool = False
    include: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    limit: int | None = None
    epochs: int | None = None
    resume: bool = False
    overrides: dict[str, Any] = field(default_factory=dict)
    max_tokens: int | None = None
    context_size: int | None = None
    cache: bool | None = None
    output: Path | None = None
    overwrite: bool = False
    allow_changed_settings: bool = False
    config_root: Path = Path(".")


def token_budget(max_tokens: int | None, context_size: int | None) -> int | None:
    """`--max-tokens` and `--context-size` name one budget; both only when they agree."""
    for option, value in (("--max-tokens", max_tokens), ("--context-size", context_size)):
        if value is not None and value <= 0:
            raise UsageError(f"{option}: must be a positive number of tokens, not {value}")
    if max_tokens is not None and context_size is not None and max_tokens != context_size:
        raise UsageError(
            f"--max-tokens ({max_tokens}) and --context-size ({context_size}) set the same "
            "budget: give one, or give both equal"
        )
    return max_tokens if max_tokens is not None else context_size


def apply_runner_overrides(runner: RunnerConfig, overrides: dict[str, Any]) -> RunnerConfig:
    """Validate CLI overrides with the same schema as params.yaml, naming the option at fault."""
    values = runner.model_dump()
    values.update({k: v for k, v in overrides.items() if v is not None})
    try:
        return RunnerConfig.model_validate(values)
    except ValidationError as exc:
        messages = [
            f"{_OPTION_OF.get(str(err['loc'][0]), str(err['loc'][0]))}: {err['msg']}"
            for err in exc.errors()
        ]
        raise UsageError("; ".join(messages)) from None


def select(config: AppConfig, options: RunOptions) -> tuple[list[str], list[str]]:
    """Models and benchmarks to run; unknown names are a usage error listing the known ones."""
    models = options.models or config.run.models
    benchmarks = options.benchmarks or config.run.benchmarks or config.active_benchmarks()
    for name in models:
        if name not in config.models:
            raise UsageError(f"--model: unknown model {name!r}; known: {', '.join(config.models)}")
    for name in benchmarks:
        if name not in config.benchmarks:
            raise UsageError(
                f"--benchmark: unknown benchmark {name!r}; known: {', '.join(config.benchmarks)}"
            )
    if not models:
        raise UsageError("no model selected: pass --model or set run.models in params.yaml")
    return list(dict.fromkeys(models)), list(dict.fromkeys(benchmarks))


def as_mock(model: ModelConfig) -> ModelConfig:
    """The mock stand-in of a model: same name and settings, simulated answers."""
    from llm_eval.providers.registry import is_simulated

    if is_simulated(model):
        return model
    label = f"{model.label or model.model} (mock stand-in)"
    return model.model_copy(
        update={"provider": "mock", "profile": "varied", "api_key_env": None, "label": label}
    )


def prepare(options: RunOptions) -> tuple[AppConfig, list[str], list[str]]:
    """Load, validate and adjust the config for this run; raise before anything runs."""
    from llm_eval.config.validation import validate

    report = validate(str(options.config_root))
    if not report.ok:
        raise ConfigError(report.problems)
    config = report.config
    assert config is not None
    budget = token_budget(options.max_tokens, options.context_size)
    overrides = dict(options.overrides, max_tokens=budget)
    config.runner = apply_runner_overrides(config.runner, overrides)
    models, benchmarks = select(config, options)
    check_categories(report.categories, benchmarks, options)
    for name in models:
        entry = config.models[name]
        if budget is not None:
            entry = entry.model_copy(update={"max_tokens": budget})
        config.models[name] = as_mock(entry) if options.mock else entry
    return config, models, benchmarks


def check_categories(
    categories: dict[str, frozenset[str]], benchmarks: list[str], options: RunOptions
) -> None:
    """An `--include` / `--exclude` category that no selected task has is a usage error."""
    known = set().union(*(categories.get(name, frozenset()) for name in benchmarks))
    for option, asked in (("--include", options.include), ("--exclude", options.exclude)):
        unknown = sorted(set(asked) - known)
        if unknown:
            raise UsageError(
                f"{option}: no selected task has category {', '.join(map(repr, unknown))}; "
                f"known: {', '.join(sorted(known))}"
            )


def _terminate_like_interrupt(signum: int, frame: object) -> None:
    """SIGTERM stops a run the way Ctrl-C does, so every cleanup (tool sandboxes) runs."""
    raise KeyboardInterrupt


def default_output(root: Path, run_id: str) -> Path:
    return root / "results" / f"run-{run_id}.jsonl"


def execute_run(options: RunOptions) -> int:
    """Run and print a summary; the exit code says whether too many rows errored."""
    from dotenv import load_dotenv

    from llm_eval.cli.progress import RichProgress
    from llm_eval.runner.runner import EvaluationRunner, TaskFilter, check_api_keys, new_run_id

    if options.resume and options.output is None:
        raise UsageError("--resume needs --output naming the trace file to complete")
    config, models, benchmarks = prepare(options)
    load_dotenv(config.root / ".env", override=False)
    check_api_keys(config, models)
    run_id = new_run_id()
    output = options.output or default_output(config.root, run_id)
    progress = RichProgress()
    runner = EvaluationRunner(
        config,
        models,
        benchmarks,
        output,
        task_filter=TaskFilter(
            frozenset(options.include), frozenset(options.exclude), options.limit
        ),
        epochs=options.epochs,
        resume=options.resume,
        overwrite=options.overwrite,
        allow_changed_settings=options.allow_changed_settings,
        use_cache=options.cache,
        progress=progress,
        run_id=run_id,
    )
    from llm_eval.tracking import prepare_tracking, track_stage

    tracked = prepare_tracking(config.root)
    made_now: set[tuple[str, str, str, int]] = set()  # keys of rows this run wrote
    runner.on_row = lambda row: made_now.add(row.key)
    previous = signal.signal(signal.SIGTERM, _terminate_like_interrupt)
    try:
        summary = asyncio.run(runner.run())
    except KeyboardInterrupt:
        progress.stop()
        if tracked and output.is_file():  # the rows so far, in a run that ends KILLED
            track_stage("run", config_root=config.root, rows_paths=[output], status="KILLED",
                        new_rows=made_now)  # fmt: skip
        raise
    finally:
        progress.stop()
        signal.signal(signal.SIGTERM, previous)
    code = _print_summary(summary, config.runner.fail_on_error)
    if tracked:
        track_stage("run", config_root=config.root, rows_paths=[summary.output], new_rows=made_now)
    return code


def _print_summary(summary: Any, fail_on_error: float) -> int:
    statuses = summary.statuses
    print(
        f"wrote {summary.rows_written} rows ({summary.rows_kept} kept from before) to "
        f"{summary.output}: {statuses['correct']} correct, {statuses['incorrect']} incorrect, "
        f"{statuses['error']} error; {summary.calls.model_calls} model calls, "
        f"{summary.calls.cache_hits} cache hits"
    )
    if summary.rows_stale:
        print(f"{summary.rows_stale} finished rows ran again: their task's text had changed")
    for model, error in summary.first_errors.items():
        print(f"first error of {model}: {error.kind}: {error.message[:300]}")
    if summary.error_share() > fail_on_error:
        print(
            f"error rows are {summary.error_share():.1%} of the run, above fail_on_error "
            f"{fail_on_error:.1%}"
        )
        return 3
    return 0
