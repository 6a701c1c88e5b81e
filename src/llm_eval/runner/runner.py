"""`EvaluationRunner`: concurrency, retries, timeouts, filtering, flow dispatch, trace writing."""

from __future__ import annotations

import asyncio
import gc
import random
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from llm_eval.config.loading import AppConfig
from llm_eval.config.run_inputs import question_digest
from llm_eval.config.task_files import read_task_file
from llm_eval.errors import ProviderError, UsageError
from llm_eval.flows import FLOWS, FlowContext, FlowResult
from llm_eval.providers.base import ChatRequest, ChatResponse, Provider, TaskHint
from llm_eval.providers.body_limits import BodyLimits
from llm_eval.providers.registry import create_provider, wire_protocol_of
from llm_eval.redaction import redact, redact_data, redact_settings
from llm_eval.runner.breaker import CircuitBreaker
from llm_eval.runner.budget import Budget, SpendGate
from llm_eval.runner.cache import ResponseCache, cache_dir
from llm_eval.runner.model_client import ModelClient, partial_content
from llm_eval.runner.open_files import ensure_open_files
from llm_eval.runner.ramp import StartBucket
from llm_eval.runner.ratelimit import AdaptiveLimiter
from llm_eval.runner.resume import (
    question_unchanged,
    regraded_under_current_key,
    rerun_gaps,
    task_still_listed,
)
from llm_eval.runner.retry import AttemptLog, RetryPolicy
from llm_eval.runner.row_clock import (
    new_run_id,
    now_stamp,
    planned_counts,
    settings_digest,
    simulated_clock,
    with_attempts,
)
from llm_eval.runner.stopping import RunStopped, StopReason
from llm_eval.runner.trace_io import (
    AsyncTraceWriter,
    exclusive_writer,
    is_trace_file,
    prepare_rerun,
    prepare_resume,
    read_rows,
    write_rows,
)
from llm_eval.runner.work_items import (
    ProgressSink,
    Rerun,
    RunSummary,
    SilentProgress,
    TaskFilter,
    WorkItem,
    check_api_keys,
)
from llm_eval.schemas import (
    CallRecord,
    ErrorInfo,
    ModelConfig,
    RowKey,
    TraceRow,
    Usage,
)
from llm_eval.scoring.rows import score_row
from llm_eval.tools.registry import ToolRegistry

__all__ = [
    "EvaluationRunner",
    "ProgressSink",
    "Rerun",
    "RunSummary",
    "SilentProgress",
    "TaskFilter",
    "WorkItem",
    "check_api_keys",
    "new_run_id",
    "simulated_clock",
]


class EvaluationRunner:
    """Runs every selected model on every selected task, writing one trace row each."""

    def __init__(
        self,
        config: AppConfig,
        models: list[str],
        benchmarks: list[str],
        output: Path,
        *,
        task_filter: TaskFilter | None = None,
        epochs: int | None = None,
        resume: bool = False,
        overwrite: bool = False,
        allow_changed_settings: bool = False,
        use_cache: bool | None = None,
        progress: ProgressSink | None = None,
        provider_factory: Callable[[ModelConfig], Provider] = create_provider,
        run_id: str | None = None,
        on_row: Callable[[TraceRow], None] | None = None,
        rerun: Rerun | None = None,
    ) -> None:
        self.config = config
        self.on_row = on_row  # told of each row once it is written
        self.models = models
        self.benchmarks = benchmarks
        self.output = output
        self.filter = task_filter or TaskFilter()
        self.epochs = epochs or config.runner.epochs
        self.resume = resume
        self.overwrite = overwrite
        self.allow_changed_settings = allow_changed_settings
        self.progress: ProgressSink = progress or SilentProgress()
        self.rerun = rerun
        runner = config.runner
        self.budget = Budget(runner.max_cost_usd, runner.max_total_tokens)
        self.policy = RetryPolicy(
            runner.max_attempts,
            runner.backoff_base_s,
            runner.backoff_max_s,
            runner.retry_after_cap_s,
        )
        use_cache = runner.cache if use_cache is None else use_cache
        cache = (
            ResponseCache(cache_dir(config.root), runner.max_response_chars) if use_cache else None
        )
        self.tools = ToolRegistry(config.tools)
        self.summary = RunSummary(output, run_id or new_run_id())
        self.clients = self._clients(provider_factory, cache)
        # Whether a model is simulated is the provider's own flag: a simulated provider reads
        # the expected answer, and its rows and reports must say so.
        self.simulated = {name: client.provider.simulated for name, client in self.clients.items()}
        self.gate = SpendGate(self.budget, self.summary.spend, self._stop_at_budget)
        self._global = asyncio.Semaphore(runner.global_limit)
        self._per_model = {
            name: asyncio.Semaphore(min(runner.per_model_limit, client.limiter.ceiling))
            for name, client in self.clients.items()
        }
        self._ramp = StartBucket(
            runner.ramp_up_starts_per_s, runner.ramp_up_burst, runner.global_limit
        )
        self._tasks: list[asyncio.Task[None]] = []
        self._unfinished: set[RowKey] = set()
        self._settings: dict[tuple[str, str], dict[str, Any]] = {}
        self._labels: dict[str, str] = {}
        self._task_ids: dict[str, frozenset[str]] = {}  # every task of each file, unfiltered
        self._owed: list[RowKey] = []  # planned rows a targeted rerun leaves without a row

    def _clients(
        self, factory: Callable[[ModelConfig], Provider], cache: ResponseCache | None
    ) -> dict[str, ModelClient]:
        """One client per model; models on one connection share its adaptive limiter."""
        limiters: dict[str, AdaptiveLimiter] = {}
        clients: dict[str, ModelClient] = {}
        runner = self.config.runner
        body_limits = BodyLimits(runner.max_response_bytes, runner.max_compression_ratio)
        rng = random.Random()
        for name in self.models:
            provider = factory(self.config.models[name])
            key = provider.connection_key()
            ceiling = min(self.config.runner.global_limit, provider.max_connections() or 10**9)
            limiter = limiters.setdefault(key, AdaptiveLimiter(ceiling))
            clients[name] = ModelClient(
                provider, self.policy, limiter, cache, self.summary.calls, rng,
                self.config.runner.max_response_chars, body_limits,
                CircuitBreaker(runner.endpoint_down_after),
            )  # fmt: skip
        return clients

    # ------------------------------------------------------------------ planning

    def plan(self) -> list[WorkItem]:
        """Every work item of this run, before resume filtering."""
        items: list[WorkItem] = []
        for benchmark in self.benchmarks:
            bench = self.config.benchmarks[benchmark]
            loaded = read_task_file(
                self.config.benchmark_path(benchmark), expected_type=bench.task_type
            )
            self._task_ids[benchmark] = frozenset(entry.task.id for entry in loaded.tasks)
            tasks = self.filter.apply([entry.task for entry in loaded.tasks])
            for model in self.models:
                items += [
                    WorkItem(model, benchmark, t, e) for t in tasks for e in range(self.epochs)
                ]
        return items

    async def run(self) -> RunSummary:
        """Run the plan; with `resume`, keep finished rows and run only missing or errored ones.

        The trace file is locked for the whole run; an existing file that is not a trace of
        this tool is never truncated unless `overwrite`.
        """
        self._check_output()
        with exclusive_writer(self.output):
            self._refuse_a_finished_run()
            return await self._run_locked()

    def _check_output(self) -> None:
        output = self.output
        if output.is_dir():
            raise UsageError(f"--output: {output} is a directory; name a .jsonl file")
        if not output.exists() or self.resume or self.overwrite:
            return
        if not is_trace_file(output):
            raise UsageError(
                f"--output: {output} exists and is not a trace of llm-eval; refusing to "
                "overwrite it (pass --overwrite to replace it anyway)"
            )

    def _refuse_a_finished_run(self) -> None:
        """A plain run into a file that holds rows would replace them unasked: refused."""
        output = self.output
        if self.resume or self.overwrite or self.rerun is not None:
            return
        if not output.exists() or not output.stat().st_size:
            return
        raise UsageError(
            f"--output: {output} already holds a run; pass --resume to complete it, "
            "--overwrite to replace it, or choose another --output"
        )

    async def _run_locked(self) -> RunSummary:
        ensure_open_files(self.config.runner.global_limit)
        items, kept = self._select_and_keep(self.plan())
        self.summary.rows_kept = len(kept)
        self.summary.statuses.update(row.status for row in kept.values())
        self.summary.planned = planned_counts([*kept, *(i.key for i in items), *self._owed])
        self._unfinished = {item.key for item in items}
        totals = Counter(item.model for item in items)
        self.progress.start(dict(totals))
        # The heap left by start-up (LiteLLM's modules and price table) never becomes garbage,
        # yet every full collection walks it: about 0.2 s with the event loop stopped, which
        # holds up every request in flight. Freezing it keeps collections to what the run made.
        gc.freeze()
        try:
            async with AsyncTraceWriter(self.output) as writer:
                await self._run_all(items, writer)
        finally:
            gc.unfreeze()
            await self._close_providers()
        stop = self.summary.stop
        if stop is not None and stop.kind == "budget":  # the real spend, not the cap's
            self.summary.stop = StopReason.budget(self.gate.stated(stop.detail))
        self.summary.pending = [item for item in items if item.key in self._unfinished]
        if all(self.simulated.values()):
            self._write_in_plan_order()
        return self.summary

    async def _close_providers(self) -> None:
        """Close connections the providers hold; they belong to this run's event loop."""
        for client in self.clients.values():
            await client.provider.aclose()

    def _select_and_keep(self, items: list[WorkItem]) -> tuple[list[WorkItem], dict[RowKey, Any]]:
        """The items to run and the rows of the results file to keep.

        A fresh run keeps nothing; `--resume` keeps finished rows and runs the rest; a
        targeted rerun keeps every row but the ones it replaces.
        """
        planned = {item.key: item.task for item in items}
        listed = task_still_listed(self._task_ids, self.summary)
        if self.rerun is not None:
            items = self._rerun_items(items)
        if self.resume:
            tasks = {item.key: item.task for item in items}
            unchanged = question_unchanged(tasks, self.summary)
            kept = prepare_resume(
                self.output,
                self._row_settings,
                allow_changed_settings=self.allow_changed_settings,
                still_current=lambda row: listed(row) and unchanged(row),
                refresh=regraded_under_current_key(tasks, self.config.benchmarks, self.summary),
            )
            return [item for item in items if item.key not in kept], kept
        if self.rerun is not None:
            kept = prepare_rerun(
                self.output, {item.key for item in items}, self._row_settings,
                allow_changed_settings=self.allow_changed_settings, still_listed=listed,
            )  # fmt: skip
            stale, self._owed = rerun_gaps(planned, kept, {item.key for item in items})
            self.summary.rerun_stale, self.summary.rerun_unplanned = len(stale), len(self._owed)
            return items, kept
        if self.output.exists():
            self.output.unlink()
        return items, {}

    def _rerun_items(self, items: list[WorkItem]) -> list[WorkItem]:
        """The planned items a targeted rerun selects; an unknown task id is a usage error."""
        assert self.rerun is not None
        unknown = sorted(self.rerun.task_ids - {item.task.id for item in items})
        if unknown:
            raise UsageError(
                f"--task-id: no selected task has id {', '.join(map(repr, unknown))} "
                f"(benchmarks: {', '.join(self.benchmarks)})"
            )
        return [item for item in items if self.rerun.selects(item)]

    async def _run_all(self, items: list[WorkItem], writer: AsyncTraceWriter) -> None:
        """Run every item as its own task, so that a stop can cancel the ones in flight."""
        self._tasks = [asyncio.create_task(self._run_item(item, writer)) for item in items]
        if not self._tasks:
            return
        await asyncio.wait(self._tasks)
        for task in self._tasks:
            if not task.cancelled() and task.exception() is not None:
                raise task.exception()  # type: ignore[misc]

    def request_stop(self, reason: StopReason) -> None:
        """Stop the run: start nothing new and keep written rows; a signal also cancels the
        tasks in flight (their calls are counted as cancelled), a budget stop lets their
        calls return and write their rows, since they are paid for.
        """
        if self.summary.stop is None:
            self.summary.stop = reason
        self.gate.halt()
        if reason.kind == "budget":
            return
        current = asyncio.current_task()
        for task in self._tasks:
            if task is not current:
                task.cancel()

    def _write_in_plan_order(self) -> None:
        """Rewrite the finished file in plan order (rows land in completion order).

        Concurrency makes completion order vary from run to run; the plan's order does not,
        so two runs of the same simulated models give byte-identical files. Only for
        simulated runs: re-reading a real run's file would add to the harness's CPU cost per
        request for no gain (its latencies differ from run to run anyway).
        """
        position = {item.key: index for index, item in enumerate(self.plan())}
        rows = read_rows(self.output)
        rows.sort(key=lambda row: position.get(row.key, len(position)))
        write_rows(self.output, rows)

    # ------------------------------------------------------------------ one item

    async def _run_item(self, item: WorkItem, writer: AsyncTraceWriter) -> None:
        async with self._global, self._per_model[item.model]:
            if self.summary.stop is not None:
                return
            await self._ramp.start()
            try:
                row = await self._execute(item)
            except RunStopped:
                return
        if self.simulated[item.model]:
            row = simulated_clock(row)
        await writer.write(row)
        self._unfinished.discard(item.key)
        if self.on_row is not None:
            self.on_row(row)
        self.summary.rows_written += 1
        self.summary.statuses[row.status] += 1
        if row.error is not None:
            self.summary.first_errors.setdefault(item.model, row.error)
        self.progress.row_done(item.model, row.status, item.key)

    async def _execute(self, item: WorkItem) -> TraceRow:
        started_at, started = now_stamp(), time.perf_counter()
        calls: list[CallRecord] = []
        conversation: list[dict[str, Any]] = []
        attempts = AttemptLog()
        try:
            # A deadline on this task, not `wait_for`'s extra task per item (its CPU showed
            # at 1,000 in flight).
            async with asyncio.timeout(self.config.runner.task_timeout_s):
                result = await self._run_flow(item, calls, conversation, attempts)
        except RunStopped:
            raise
        except ProviderError as error:
            return self._error_row(item, calls, conversation, error, started_at, started)
        except TimeoutError:
            limit = self.config.runner.task_timeout_s
            timeout = ProviderError("task_timeout", f"task exceeded {limit} s", transient=False)
            row = self._error_row(item, calls, conversation, timeout, started_at, started)
            return with_attempts(row, attempts.attempts)
        except Exception as exc:  # a bug must not take the run down with it: record it
            message = f"{type(exc).__name__}: {exc}"
            internal = ProviderError("internal_error", message, transient=False)
            return self._error_row(item, calls, conversation, internal, started_at, started)
        row = self._base_row(item, calls, result.messages, started_at, started, "incorrect")
        row = row.model_copy(
            update={
                "response": result.response,
                "reasoning": result.reasoning,
                "tool_calls": result.tool_calls,
            }
        )
        return score_row(row)

    async def _run_flow(
        self,
        item: WorkItem,
        calls: list[CallRecord],
        conversation: list[dict[str, Any]],
        attempts: AttemptLog,
    ) -> FlowResult:
        bench = self.config.benchmarks[item.benchmark]
        model = self.config.models[item.model]
        prompt = self.config.prompts[bench.prompt]
        if model.prompt:  # a model-specific system text replaces the benchmark's
            prompt = prompt.model_copy(update={"system": self.config.prompts[model.prompt].system})

        async def call(
            messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
        ) -> ChatResponse:
            conversation[:] = messages
            return await self._call_model(item, messages, tools, calls, attempts)

        ctx = FlowContext(call, prompt, self.tools, bench.tools, self.config.runner.tool_max_rounds)
        return await FLOWS[bench.resolved_flow](item.task, ctx)

    async def _call_model(
        self,
        item: WorkItem,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        calls: list[CallRecord],
        attempts: AttemptLog,
    ) -> ChatResponse:
        client = self.clients[item.model]
        task = item.task
        strict = bool(task.answer_script or task.answer_format)
        hint = TaskHint(item.benchmark, task.id, task.answer, task.task_type, task.difficulty,
                        tuple(task.distractors), strict)  # fmt: skip
        request = client.request(self._request(item, messages, tools), hint)
        retried = lambda _error: self.progress.retried(item.model, item.key)  # noqa: E731
        if self.summary.stop is not None:
            raise RunStopped
        reservation = await self.gate.reserve(request, simulated=self.simulated[item.model])
        try:
            response = await client.call(request, calls, retried, attempts)
        except asyncio.CancelledError:
            self.gate.cancelled(reservation)
            raise
        except BaseException:
            self.gate.release(reservation)
            raise
        if calls[-1].cached:
            self.gate.release(reservation)
        else:
            self.gate.settle(reservation, calls[-1].usage)
        return response

    def _stop_at_budget(self, why: str) -> None:
        self.request_stop(StopReason.budget(why))

    def _request(
        self, item: WorkItem, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> ChatRequest:
        model = self.config.models[item.model]
        return ChatRequest(
            model_name=item.model,
            model=model,
            messages=[dict(m) for m in messages],
            tools=tools,
            max_tokens=model.max_tokens or self.config.runner.max_tokens,
            timeout_s=self.config.runner.request_timeout_s,
            epoch=item.epoch,
        )

    # ------------------------------------------------------------------ rows

    def _settings_of(self, model_name: str, benchmark: str) -> dict[str, Any]:
        """What decides a row's answer besides the task: a resume must not mix two of these.

        Constant per model and benchmark, so made once for the pair (redacting and digesting
        it for every row was a fifth of the direct route's CPU); callers get their own copy.
        """
        made = self._settings.get((model_name, benchmark))
        if made is None:
            made = self._settings[(model_name, benchmark)] = self._make_settings(
                model_name, benchmark
            )
        return dict(made)

    def _make_settings(self, model_name: str, benchmark: str) -> dict[str, Any]:
        model = self.config.models[model_name]
        bench = self.config.benchmarks[benchmark]
        prompt = self.config.prompts[model.prompt or bench.prompt].model_dump()
        runner = self.config.runner
        settings = model.answer_settings()
        settings["max_tokens"] = model.max_tokens or runner.max_tokens
        settings["prompt_digest"] = settings_digest(
            [prompt, self.config.prompts[bench.prompt].model_dump()]
        )
        settings["tools"] = list(bench.tools)
        settings["tool_max_rounds"] = runner.tool_max_rounds
        settings["max_response_chars"] = runner.max_response_chars
        # Stored in every row: a secret pasted into a URL or extra_params must not be, nor
        # a header or a secret-named setting whatever its value looks like.
        redacted: dict[str, Any] = redact_settings(settings)
        return redacted

    def _label_of(self, model_name: str) -> str:
        """The model's label as rows store it (redacted once per model, not per row)."""
        label = self._labels.get(model_name)
        if label is None:
            model = self.config.models[model_name]
            label = self._labels[model_name] = redact(model.label or model_name)
        return label

    @staticmethod
    def _latency(simulated: bool, calls: list[CallRecord], started: float) -> float:
        """Wall time of the task less its waits for a connection slot (the harness's queue,
        not the model's time), plus the original latency of each reply replayed from the
        cache; for a simulated model, its simulated call latencies, so that a rerun of the
        offline pipeline writes byte-identical metrics, reports and charts."""
        if simulated:
            return round(sum(record.latency_s for record in calls), 6)
        waited = sum(record.queue_s for record in calls)
        replayed = sum(record.latency_s for record in calls if record.cached)
        return round(max(time.perf_counter() - started - waited, 0.0) + replayed, 6)

    def _row_settings(self, row: TraceRow) -> dict[str, Any]:
        if row.model not in self.config.models or row.benchmark not in self.config.benchmarks:
            return {}
        settings = self._settings_of(row.model, row.benchmark)
        # A row made on a route that sends the same request as this one is not a change.
        before = row.settings.get("provider")
        if isinstance(before, str) and wire_protocol_of(before) == wire_protocol_of(
            settings["provider"]
        ):
            settings["provider"] = before
        return settings

    def _base_row(
        self,
        item: WorkItem,
        calls: list[CallRecord],
        messages: list[dict[str, Any]],
        started_at: str,
        started: float,
        status: str,
    ) -> TraceRow:
        model = self.config.models[item.model]
        bench = self.config.benchmarks[item.benchmark]
        usage = Usage()
        for record in calls:
            usage = usage.plus(record.usage)
        return TraceRow(
            run_id=self.summary.run_id,
            model=item.model,
            model_label=self._label_of(item.model),
            provider=model.provider,
            simulated=self.simulated[item.model],
            benchmark=item.benchmark,
            task_id=item.task.id,
            task_type=item.task.task_type,
            category=item.task.category,
            epoch=item.epoch,
            answer=item.task.answer,
            answer_regex=item.task.answer_regex,
            accepted_answers=item.task.accepted_answers,
            distractors=item.task.distractors,
            answer_script=item.task.answer_script,
            answer_format=item.task.answer_format,
            difficulty=item.task.difficulty,
            scorer=bench.scorer,
            messages=redact_data(messages),
            calls=calls,
            usage=usage,
            latency_s=self._latency(self.simulated[item.model], calls, started),
            attempts=sum(record.attempts for record in calls),
            from_cache=any(record.cached for record in calls),
            status=status,  # type: ignore[arg-type]
            settings=self._settings_of(item.model, item.benchmark),
            question_digest=question_digest(item.task),
            started_at=started_at,
            finished_at=now_stamp(),
        )

    def _error_row(
        self,
        item: WorkItem,
        calls: list[CallRecord],
        messages: list[dict[str, Any]],
        error: ProviderError,
        started_at: str,
        started: float,
    ) -> TraceRow:
        row = self._base_row(item, calls, list(messages), started_at, started, "error")
        info = ErrorInfo(
            kind=error.kind,
            message=redact(error.message)[:2000],
            status_code=error.status_code,
            attempts=row.attempts,
            partial_content=partial_content(error, self.config.runner.max_response_chars),
        )
        return row.model_copy(update={"error": info})
