"""The `llm-eval` command line. Heavy libraries are imported inside the commands that use them."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from llm_eval.errors import ConfigError, LlmEvalError, UsageError

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Evaluate language models on the suite defined by params.yaml and configs/.",
)

ConfigRoot = Annotated[
    Path, typer.Option("--config-root", help="Directory holding params.yaml, configs/ and data/.")
]


def _fail(message: str, code: int = 2) -> None:
    typer.echo(message, err=True)
    raise typer.Exit(code)


@app.command()
def validate(
    config_root: ConfigRoot = Path("."),
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Also write the outcome as JSON (DVC stage).")
    ] = None,
    run_inputs: Annotated[
        Path | None,
        typer.Option(
            "--run-inputs",
            help="When valid, also write a digest of what a run sends, answer keys left out "
            "(the `run` stage's dependency).",
        ),
    ] = None,
) -> None:
    """Dry run: check config, references and every task file; call no model, write nothing."""
    from llm_eval.config.validation import validate as run_validation

    report = run_validation(str(config_root))
    for warning in report.warnings:
        typer.echo(f"warning: {warning}", err=True)
    if json_out is not None:  # the pipeline's `validate` stage: write the JSON, track it
        from llm_eval.cli.validate import write_validation

        write_validation(report, json_out, config_root)
    if not report.ok:
        for problem in report.problems:
            typer.echo(str(problem), err=True)
        _fail(f"validation failed: {len(report.problems)} problem(s)", 1)
    assert report.config is not None
    if run_inputs is not None:
        from llm_eval.cli.validate import write_run_inputs

        write_run_inputs(report.config, run_inputs)
    active = report.config.active_benchmarks()
    total = sum(report.task_counts[name] for name in active)
    typer.echo(
        f"OK: {len(report.config.models)} models, {len(active)} benchmarks, {total} tasks, "
        f"{len(report.config.prompts)} prompts, {len(report.config.tools)} tools"
    )


@app.command("list-config")
def list_config(
    config_root: ConfigRoot = Path("."),
    categories: Annotated[
        bool,
        typer.Option(
            "--categories", help="List each benchmark's task categories with task counts."
        ),
    ] = False,
) -> None:
    """Show models, benchmarks (with task counts), prompts and tools."""
    from llm_eval.config.validation import validate as run_validation

    report = run_validation(str(config_root))
    if report.config is None:
        for problem in report.problems:
            typer.echo(str(problem), err=True)
        _fail("the configuration does not load", 1)
    assert report.config is not None
    from llm_eval.cli.console import print_categories, print_config

    if categories:
        print_categories(report.config)
    else:
        print_config(report.config, report.task_counts)


@app.command()
def run(
    model: Annotated[
        list[str], typer.Option("--model", "-m", help="Model name (repeatable).")
    ] = [],  # noqa: B006
    benchmark: Annotated[
        list[str], typer.Option("--benchmark", "-b", help="Benchmark name (repeatable).")
    ] = [],  # noqa: B006
    mock: Annotated[
        bool, typer.Option(help="Swap every selected model for the mock provider.")
    ] = False,
    include: Annotated[list[str], typer.Option(help="Only tasks of this category.")] = [],  # noqa: B006
    exclude: Annotated[list[str], typer.Option(help="Skip tasks of this category.")] = [],  # noqa: B006
    limit: Annotated[int | None, typer.Option(min=1, help="First N tasks per benchmark.")] = None,
    epochs: Annotated[int | None, typer.Option(min=1, help="Run each task K times.")] = None,
    resume: Annotated[
        bool, typer.Option(help="Keep finished rows of --output; run the rest.")
    ] = False,
    max_attempts: Annotated[int | None, typer.Option(help="Attempts per model call.")] = None,
    request_timeout: Annotated[float | None, typer.Option(help="Seconds per model call.")] = None,
    task_timeout: Annotated[float | None, typer.Option(help="Seconds per task.")] = None,
    global_limit: Annotated[int | None, typer.Option(help="Tasks in flight overall.")] = None,
    per_model_limit: Annotated[int | None, typer.Option(help="Tasks in flight per model.")] = None,
    max_tokens: Annotated[int | None, typer.Option(help="Completion token budget.")] = None,
    context_size: Annotated[int | None, typer.Option(help="Same budget as --max-tokens.")] = None,
    fail_on_error: Annotated[
        float | None, typer.Option(help="Exit non-zero above this share of error rows.")
    ] = None,
    cache: Annotated[bool | None, typer.Option(help="Use the response cache.")] = None,
    output: Annotated[Path | None, typer.Option(help="Trace JSONL to write.")] = None,
    overwrite: Annotated[
        bool, typer.Option(help="Replace --output: a finished run, or a file that is no trace.")
    ] = False,
    allow_changed_settings: Annotated[
        bool, typer.Option(help="--resume: keep rows made under other settings.")
    ] = False,
    max_cost: Annotated[
        float | None,
        typer.Option(help="Stop cleanly once this run's model calls cost this many USD (exit 4)."),
    ] = None,
    max_total_tokens: Annotated[
        int | None,
        typer.Option(help="Stop cleanly once this run's model calls used this many tokens."),
    ] = None,
    max_response_bytes: Annotated[
        int | None,
        typer.Option(help="Largest reply body read, decoded; larger is a response_too_large row."),
    ] = None,
    only_wrong: Annotated[
        Path | None,
        typer.Option(
            help="Rerun only the rows this scored file has wrong, replacing them in --output "
            "(default: the trace file they came from)."
        ),
    ] = None,
    task_id: Annotated[
        list[str],
        typer.Option(help="Rerun only this task id (repeatable), replacing its rows in --output."),
    ] = [],  # noqa: B006
    config_root: ConfigRoot = Path("."),
) -> None:
    """Run models on benchmarks and write one trace row per model x task x epoch."""
    from llm_eval.cli.run import RunOptions, execute_run

    options = RunOptions(
        models=model,
        benchmarks=benchmark,
        mock=mock,
        include=include,
        exclude=exclude,
        limit=limit,
        epochs=epochs,
        resume=resume,
        overrides={
            "max_attempts": max_attempts,
            "request_timeout_s": request_timeout,
            "task_timeout_s": task_timeout,
            "global_limit": global_limit,
            "per_model_limit": per_model_limit,
            "fail_on_error": fail_on_error,
            "max_cost_usd": max_cost,
            "max_total_tokens": max_total_tokens,
            "max_response_bytes": max_response_bytes,
        },
        max_tokens=max_tokens,
        context_size=context_size,
        cache=cache,
        output=output,
        overwrite=overwrite,
        allow_changed_settings=allow_changed_settings,
        config_root=config_root,
        only_wrong=only_wrong,
        task_ids=task_id,
    )
    raise typer.Exit(execute_run(options))


@app.command()
def score(
    results: Annotated[list[Path], typer.Option("--results", "-r", help="Trace JSONL file(s).")],
    output: Annotated[
        Path | None, typer.Option(help="Write scored rows here (default: rescore in place).")
    ] = None,
    metrics: Annotated[
        Path | None, typer.Option(help="Write the flat headline metrics JSON (DVC metrics).")
    ] = None,
    details: Annotated[Path | None, typer.Option(help="Write per-benchmark metrics JSON.")] = None,
    explain: Annotated[
        str | None, typer.Option(help="Show how each scoring rule decided for this task id.")
    ] = None,
    judge: Annotated[
        str | None,
        typer.Option(
            help="Let this configured model settle the rows still unsure after reviews "
            "(off by default; its verdicts are kept in reviews/judge.jsonl)."
        ),
    ] = None,
    config_root: ConfigRoot = Path("."),
) -> None:
    """Rescore trace rows with today's answer keys, then people's verdicts
    (reviews/verdicts.jsonl); no model call unless --judge."""
    from llm_eval.cli.score import execute_explain, execute_score

    if explain is not None:
        raise typer.Exit(execute_explain(results, explain, config_root))
    raise typer.Exit(execute_score(results, output, metrics, config_root, details, judge))


@app.command()
def review(
    results: Annotated[
        list[Path],
        typer.Option(
            "--results",
            "-r",
            help="Scored trace JSONL file(s) (default: results/scored/ of every run.models model).",
        ),
    ] = [],  # noqa: B006
    reviewer: Annotated[str | None, typer.Option(help="Who decides (default: $USER).")] = None,
    from_mlflow: Annotated[
        bool,
        typer.Option(
            "--from-mlflow",
            help="Pull the verdicts people added to these rows' traces in MLflow instead.",
        ),
    ] = False,
    config_root: ConfigRoot = Path("."),
) -> None:
    """Decide the unsure rows one by one (right / wrong / skip / quit) into
    reviews/verdicts.jsonl; `score` then applies them."""
    from llm_eval.cli.review import execute_pull, execute_review

    if not results:
        from llm_eval.config.layout import scored_paths

        results = scored_paths(config_root)
    if from_mlflow:
        raise typer.Exit(execute_pull(results, config_root))
    raise typer.Exit(execute_review(results, reviewer, config_root))


@app.command()
def report(
    results: Annotated[
        list[Path], typer.Option("--results", "-r", help="Scored trace JSONL file(s).")
    ] = [],  # noqa: B006
    from_params: Annotated[
        bool,
        typer.Option(help="Also report results/scored/<model>.jsonl of every run.models model."),
    ] = False,
    summary: Annotated[
        Path | None, typer.Option(help="Write each model's headline metrics JSON.")
    ] = None,
    plots_data: Annotated[
        Path | None,
        typer.Option(help="Write per-model accuracy, interval, cost, latency (DVC plots data)."),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option(
            help="Markdown report to write (default: DIR/NAME-report.md beside the first "
            "--results DIR/NAME.jsonl; with only --from-params, reports/report.md)."
        ),
    ] = None,
    charts_dir: Annotated[
        Path | None,
        typer.Option(
            help="Directory for SVG charts (default: NAME-charts/ beside the report; with "
            "only --from-params, docs/images)."
        ),
    ] = None,
    no_charts: Annotated[bool, typer.Option("--no-charts", help="Skip the SVG charts.")] = False,
    title: Annotated[str, typer.Option(help="Report title.")] = "llm-eval report",
    config_root: ConfigRoot = Path("."),
) -> None:
    """Write a Markdown report (and SVG charts) from trace files."""
    from llm_eval.cli.report import default_destinations, execute_report

    output, charts_dir = default_destinations(results, output, charts_dir)
    if from_params:
        from llm_eval.config.layout import scored_paths

        results = [*results, *scored_paths(config_root)]
    if not results:
        raise UsageError("give --results PATH (repeatable) or --from-params")
    raise typer.Exit(
        execute_report(
            results,
            output,
            None if no_charts else charts_dir,
            title,
            config_root,
            summary,
            plots_data,
        )
    )


@app.command()
def compare(
    first: Annotated[Path, typer.Argument(help="Trace file of run A.")],
    second: Annotated[Path, typer.Argument(help="Trace file of run B.")],
    output: Annotated[
        Path | None, typer.Option(help="Write the report here (default: print).")
    ] = None,
) -> None:
    """Compare two runs (or two models) task by task: paired table, McNemar, bootstrap."""
    from llm_eval.cli.compare import execute_compare

    raise typer.Exit(execute_compare(first, second, output))


@app.command()
def track(
    results: Annotated[list[Path], typer.Argument(help="Trace JSONL file(s).")],
    scored: Annotated[
        bool, typer.Option("--scored", help="The files are scored: check the verdicts too.")
    ] = False,
    check: Annotated[
        bool, typer.Option("--check", help="Only report; write nothing to MLflow.")
    ] = False,
    config_root: ConfigRoot = Path("."),
) -> None:
    """Write what the MLflow record of trace files lacks, then report missing and duplicate
    traces and verdicts; exit 1 if any remain."""
    from llm_eval.cli.track import execute_track

    raise typer.Exit(execute_track(results, scored, check, config_root))


@app.command("serve-local")
def serve_local(
    model: Annotated[
        Path | None,
        typer.Option("--model", help="A GGUF file (default: the Gemma 3 270M of the llama extra)."),
    ] = None,
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port on 127.0.0.1.")] = 8080,
    n_ctx: Annotated[int, typer.Option("--n-ctx", min=1, help="Context size in tokens.")] = 4096,
) -> None:
    """Serve a GGUF with llama.cpp on 127.0.0.1:8080/v1 as `local-llama-cpp` (until Ctrl-C)."""
    from llm_eval.cli.serve_local import serve

    serve(model, port, n_ctx)


def main() -> None:
    """Console entry point: user errors print cleanly, without a traceback."""
    from llm_eval.tracking import exit_process

    try:
        app()
        code = 0
    except SystemExit as exc:  # how click ends every command, with its exit code
        if exc.code is not None and not isinstance(exc.code, int):
            print(exc.code, file=sys.stderr)
        code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    except ConfigError as exc:
        for problem in exc.problems:
            print(problem, file=sys.stderr)
        code = 1
    except (UsageError, LlmEvalError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        code = 2
    exit_process(code)


if __name__ == "__main__":
    main()
