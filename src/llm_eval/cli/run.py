"""`llm-eval run`: apply and validate overrides, check keys, run, summarise, exit code."""

from __future__ import annotations

import asyncio
import shlex
import signal
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from llm_eval.config.loading import AppConfig
from llm_eval.errors import ConfigError, UsageError
from llm_eval.schemas import ModelConfig, RunnerConfig

if TYPE_CHECKING:
    from llm_eval.runner.budget import Budget
    from llm_eval.runner.runner import EvaluationRunner, Rerun, RunSummary

_OPTION_OF = {
    "max_attempts": "--max-attempts",
    "request_timeout_s": "--request-timeout",
    "task_timeout_s": "--task-timeout",
    "global_limit": "--global-limit",
    "per_model_limit": "--per-model-limit",
    "fail_on_error": "--fail-on-error",
    "max_tokens": "--max-tokens",
    "max_cost_usd": "--max-cost",
    "max_total_tokens": "--max-total-tokens",
    "max_response_bytes": "--max-response-bytes",
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
    only_wrong: Path | None = None
    task_ids: list[str] = field(default_factory=list)


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
    """SIGTERM before the run starts or after it ends acts like Ctrl-C (during the run, the
    runner's own handler stops it cleanly instead)."""
    raise KeyboardInterrupt


def default_output(root: Path, run_id: str) -> Path:
    return root / "results" / f"run-{run_id}.jsonl"


def rerun_selection(options: RunOptions) -> Rerun | None:
    """What `--only-wrong FILE` and `--task-id ID` select, or None for a whole run."""
    from llm_eval.runner.runner import Rerun

    if options.only_wrong is None and not options.task_ids:
        return None
    if options.only_wrong is not None and options.resume:
        raise UsageError(
            "--only-wrong replaces the wrong rows; --resume completes a file: give one of them"
        )
    keys = None
    if options.only_wrong is not None:
        keys = frozenset(wrong_row_keys(options.only_wrong))
    return Rerun(frozenset(options.task_ids), keys)


def wrong_row_keys(path: Path) -> list[Any]:
    """Keys of the rows of a scored (or trace) file whose answer was scored wrong."""
    from llm_eval.runner.trace_io import read_rows

    if not path.is_file():
        raise UsageError(f"--only-wrong: no such file {path}")
    return [row.key for row in read_rows(path) if row.status == "incorrect"]


def results_file(options: RunOptions, run_id: str, root: Path) -> Path:
    """The trace file to write: `--output`, else the trace the `--only-wrong` rows came from,
    else a new one."""
    if options.output is not None:
        return options.output
    if options.only_wrong is not None:
        return source_trace(options.only_wrong)
    if options.task_ids:
        raise UsageError("--task-id needs --output naming the results file to rerun into")
    return default_output(root, run_id)


def source_trace(scored: Path) -> Path:
    """The trace file the rows of `scored` came from, as its run record names it.

    A scored file is `score`'s output: rerunning into it would leave the trace (and, in the
    pipeline, the `run` stage's output) without the new rows.
    """
    from llm_eval.runner.run_record import read_record

    record = read_record(scored)
    if record is None or record.trace is None:
        raise UsageError(
            f"--only-wrong: no run record beside {scored} names the trace its rows came "
            "from; give --output naming the trace file to rerun into"
        )
    return Path(record.trace)


def seed_new_rerun_output(options: RunOptions, output: Path) -> None:
    """`--only-wrong SCORED --output NEW`: NEW starts as a copy of the trace the rows came
    from (and its record), so it ends as that trace with the wrong rows rerun. A pipeline
    stage can then write the rerun trace as its own output, instead of editing another
    stage's."""
    import shutil

    from llm_eval.runner.run_record import copy_record, read_record

    if options.only_wrong is None or options.output is None or output.exists():
        return
    record = read_record(options.only_wrong)
    source = Path(record.trace) if record is not None and record.trace else None
    if source is None or not source.is_file() or source.resolve() == output.resolve():
        return
    output.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, output)
    copy_record(source, output)
    print(f"{output} starts as a copy of {source}, the trace the rows came from")


def execute_run(options: RunOptions) -> int:
    """Run and print a summary; the exit code says whether too many rows errored, or why
    the run stopped early (130 / 143 for SIGINT / SIGTERM, 4 for a spending cap)."""
    from dotenv import load_dotenv

    from llm_eval.cli.progress import RichProgress
    from llm_eval.runner.runner import EvaluationRunner, TaskFilter, check_api_keys, new_run_id

    if options.resume and options.output is None:
        raise UsageError("--resume needs --output naming the trace file to complete")
    rerun = rerun_selection(options)
    config, models, benchmarks = prepare(options)
    load_dotenv(config.root / ".env", override=False)
    check_api_keys(config, models)
    run_id = new_run_id()
    output = results_file(options, run_id, config.root)
    if options.only_wrong is not None and rerun is not None and rerun.keys is not None:
        print(f"rerunning {len(rerun.keys)} wrong row(s) of {options.only_wrong} into {output}")
    seed_new_rerun_output(options, output)
    if rerun is not None and options.cache is None:
        # A replayed answer would be the very answer being rerun.
        options.cache = False
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
        rerun=rerun,
    )
    from llm_eval.tracking import prepare_tracking, track_stage

    tracked = prepare_tracking(config.root, preload=False)  # no MLflow beside the requests
    made_now: set[tuple[str, str, str, int]] = set()  # keys of rows this run wrote
    runner.on_row = lambda row: made_now.add(row.key)
    previous = signal.signal(signal.SIGTERM, _terminate_like_interrupt)
    try:
        summary = asyncio.run(run_until_stopped(runner))
    except KeyboardInterrupt:  # before the loop took over the signals
        progress.stop()
        if tracked and output.is_file():  # the rows so far, in a run that ends KILLED
            track_stage("run", config_root=config.root, rows_paths=[output], status="KILLED",
                        new_rows=made_now)  # fmt: skip
        raise
    finally:
        progress.stop()
        signal.signal(signal.SIGTERM, previous)
    write_run_record(options, summary, output, keep_plan=options.resume or rerun is not None,
                     caps=runner.budget)  # fmt: skip
    if summary.pending:
        if tracked and output.is_file():  # the rows so far, in a run that ends KILLED
            track_stage("run", config_root=config.root, rows_paths=[output], status="KILLED",
                        new_rows=made_now)  # fmt: skip
        return _print_stop(summary, options, output)
    code = _print_summary(summary, config.runner.fail_on_error)
    if summary.stop is not None:  # a cap reached by the last calls: every row was written
        print(f"every planned row done, but {summary.stop.detail}")
    if tracked:
        track_stage("run", config_root=config.root, rows_paths=[summary.output], new_rows=made_now)
    return code


async def run_until_stopped(runner: EvaluationRunner) -> RunSummary:
    """Run; SIGINT or SIGTERM stops the run cleanly (rows so far kept) instead of killing it."""
    from llm_eval.runner.stopping import StopReason

    loop = asyncio.get_running_loop()
    signals = (signal.SIGINT, signal.SIGTERM)
    for signum in signals:
        loop.add_signal_handler(signum, runner.request_stop, StopReason.from_signal(signum))
    try:
        return await runner.run()
    finally:
        for signum in signals:
            loop.remove_signal_handler(signum)


def write_run_record(
    options: RunOptions, summary: RunSummary, output: Path, keep_plan: bool,
    caps: Budget | None = None,
) -> None:  # fmt: skip
    """Write `<output>.run.json`: the plan, the spend, and why and when a stopped run stopped.

    A resume or a rerun into an existing file keeps the earlier record's plan (the file still
    owes every row planned before) and adds this run's spend to the earlier runs'.
    """
    from datetime import UTC, datetime

    from llm_eval.runner.resume import plan_without_dropped
    from llm_eval.runner.run_record import (
        RunRecord,
        StopInfo,
        cap_info,
        merged_plan,
        read_record,
        with_earlier_spend,
        write_record,
    )

    earlier = read_record(output) if keep_plan else None
    owed = plan_without_dropped(earlier.planned, summary.dropped) if earlier else {}
    planned = merged_plan(owed, summary.planned)
    stop = None
    if summary.stop is not None and summary.pending:
        at = datetime.now(UTC).isoformat(timespec="seconds")
        stop = StopInfo(kind=summary.stop.kind, detail=summary.stop.detail, at=at)  # type: ignore[arg-type]
    record = RunRecord(
        status="stopped" if stop else "complete",
        stop=stop,
        planned=planned,
        cost_usd=round(summary.spend.cost_usd, 6),
        total_tokens=summary.spend.total_tokens,
        unknown_cost_calls=summary.spend.unknown_cost_calls,
        unknown_token_calls=summary.spend.unknown_token_calls,
        calls_cancelled=summary.spend.calls_cancelled,
        caps=cap_info(caps, summary.spend) if caps is not None and caps.capped else None,
        resume_command=resume_command(options, output, summary) if stop else None,
        trace=str(output),
    )
    write_record(output, with_earlier_spend(record, earlier))


def resume_command(options: RunOptions, output: Path, summary: RunSummary) -> str:
    """The command that completes a stopped run: its own options, `--output`, `--resume`.

    A stopped `--only-wrong` rerun becomes `--task-id` of the tasks it did not finish: their
    old rows are already gone, so `--resume` restricted to them fills exactly those.
    """
    parts = ["llm-eval", "run"]
    parts += [arg for name in options.models for arg in ("--model", name)]
    parts += [arg for name in options.benchmarks for arg in ("--benchmark", name)]
    parts += ["--mock"] if options.mock else []
    parts += [arg for name in options.include for arg in ("--include", name)]
    parts += [arg for name in options.exclude for arg in ("--exclude", name)]
    values: dict[str, Any] = {"--limit": options.limit, "--epochs": options.epochs,
                              "--max-tokens": options.max_tokens,
                              "--context-size": options.context_size}  # fmt: skip
    values.update({_OPTION_OF[key]: value for key, value in options.overrides.items()})
    parts += [arg for name, value in values.items() if value is not None
              for arg in (name, str(value))]  # fmt: skip
    if options.cache is not None:
        parts.append("--cache" if options.cache else "--no-cache")
    task_ids = list(options.task_ids)
    if options.only_wrong is not None:
        task_ids = list(dict.fromkeys(item.task.id for item in summary.pending))
    parts += [arg for task_id in task_ids for arg in ("--task-id", task_id)]
    parts += ["--allow-changed-settings"] if options.allow_changed_settings else []
    if options.config_root != Path("."):
        parts += ["--config-root", str(options.config_root)]
    return shlex.join([*parts, "--output", str(output), "--resume"])


def _print_stop(summary: RunSummary, options: RunOptions, output: Path) -> int:
    """One line: why the run stopped, what it holds, and the command that completes it."""
    assert summary.stop is not None
    planned = sum(n for benchmarks in summary.planned.values() for n in benchmarks.values())
    missing = len(summary.pending)
    why = (
        f"by {summary.stop.detail}"
        if summary.stop.kind == "signal"
        else f"at the budget: {summary.stop.detail}"
    )
    print(
        f"stopped {why}: {planned - missing} of {planned} rows done, {missing} missing in "
        f"{output}; resume with: {resume_command(options, output, summary)}",
        file=sys.stderr,
    )
    return summary.stop.exit_code


def changed_tasks_lines(summary: RunSummary) -> list[str]:
    """What an edited task file left in the results file, a line each."""
    lines = []
    if summary.dropped:
        n = sum(summary.dropped.values())
        lines.append(f"{n} {'row' if n == 1 else 'rows'} dropped: their tasks are no longer "
                     "in their task files")  # fmt: skip
    gaps = []
    if summary.rerun_stale:
        n = summary.rerun_stale
        gaps.append(f"{n} {'row answers' if n == 1 else 'rows answer'} a changed question")
    if summary.rerun_unplanned:
        n = summary.rerun_unplanned
        gaps.append(f"{n} {'task has' if n == 1 else 'tasks have'} no row")
    if gaps:
        lines.append(f"{' and '.join(gaps)}: the file is incomplete; --resume runs them")
    return lines


def _print_summary(summary: Any, fail_on_error: float) -> int:
    statuses = summary.statuses
    print(
        f"wrote {summary.rows_written} rows ({summary.rows_kept} kept from before) to "
        f"{summary.output}: {statuses['correct']} correct, {statuses['incorrect']} incorrect, "
        f"{statuses['unsure']} unsure, {statuses['error']} error; "
        f"{summary.calls.model_calls} model calls, "
        f"{summary.calls.cache_hits} cache hits"
    )
    if summary.rows_stale:
        print(f"{summary.rows_stale} finished rows ran again: their task's text had changed")
    if summary.rows_regraded:
        print(
            f"{summary.rows_regraded} finished rows rescored, not run again: their task's "
            "answer key or scorer had changed"
        )
    for line in changed_tasks_lines(summary):
        print(line)
    for model, error in summary.first_errors.items():
        print(f"first error of {model}: {error.kind}: {error.message[:300]}")
    if summary.error_share() > fail_on_error:
        print(
            f"error rows are {summary.error_share():.1%} of the run, above fail_on_error "
            f"{fail_on_error:.1%}"
        )
        return 3
    return 0
