"""Pydantic schemas for everything that is persisted or logged: config, tasks, trace rows."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from llm_eval.verdicts import AnswerKey, ScoreResult

TaskType = Literal["single_turn", "multi_turn", "tool_calling"]
RowStatus = Literal["correct", "incorrect", "unsure", "error"]
Difficulty = Literal["easy", "medium", "hard"]
AnswerScript = Literal["greek", "latin"]
AnswerFormat = Literal["digits", "verbatim"]
ReasoningEffort = Literal["none", "minimal", "low", "medium", "high"]

NonEmptyStr = Annotated[str, Field(min_length=1)]

RowKey = tuple[str, str, str, int]
"""A trace row's identity: (model, benchmark, task id, epoch)."""

DEFAULT_FLOW: dict[str, str] = {
    "single_turn": "single_turn",
    "multi_turn": "multi_turn",
    "tool_calling": "tool_loop",
}
"""The flow a benchmark of each task type runs unless it names another."""


class _Strict(BaseModel):
    """Base for config models: unknown keys are errors, so typos are caught by `validate`."""

    model_config = ConfigDict(extra="forbid", frozen=True)


# --------------------------------------------------------------------------- config


NOT_ANSWER_FIELDS = frozenset(
    {"label", "input_cost_per_mtok", "output_cost_per_mtok", "price_source", "api_key_env",
     "max_concurrency"}
)  # fmt: skip
"""Model fields that change no answer: how a model is named, priced, keyed and paced."""


class ModelConfig(_Strict):
    """One model configuration: which provider, which model string, which settings."""

    provider: NonEmptyStr = Field(
        description="Registered provider: `openai_compatible`, `litellm`, `mock` or `scripted`."
    )
    model: NonEmptyStr = Field(
        description="Model string in LiteLLM form (`openai/NAME`, `openrouter/NAME`)."
    )
    label: str | None = Field(None, description="Human-readable name used in reports.")
    api_key_env: str | None = Field(
        None, description="Name of the environment variable that holds the key (never the key)."
    )
    api_base: str | None = Field(None, description="Base URL of an OpenAI-compatible server.")
    reasoning_effort: ReasoningEffort | None = Field(
        None, description="Thinking budget; `none` disables thinking where the provider allows."
    )
    temperature: float | None = Field(None, ge=0.0, le=2.0, description="Sampling temperature.")
    max_tokens: int | None = Field(None, gt=0, description="Completion budget; runner default.")
    prompt: str | None = Field(
        None, description="Prompt whose system text replaces the benchmark's."
    )
    input_cost_per_mtok: float | None = Field(None, ge=0, description="USD per 1M prompt tokens.")
    output_cost_per_mtok: float | None = Field(None, ge=0, description="USD per 1M output tokens.")
    price_source: str | None = Field(
        None, description="Where and when the two prices were read (shown in the report)."
    )
    max_concurrency: int | None = Field(
        None, gt=0, description="Most calls in flight to this model (a one-slot local server: 1)."
    )
    profile: str | None = Field(None, description="Mock provider behaviour profile.")
    seed: int = Field(0, description="Seed for providers that simulate (mock).")
    extra_params: dict[str, Any] = Field(
        default_factory=dict, description="Extra provider parameters passed through verbatim."
    )

    def answer_settings(self) -> dict[str, Any]:
        """The settings of this entry that can change an answer, by name.

        Row settings, the resume check and the response-cache key all start from this, so
        pacing (`max_concurrency`), names, prices and the key's variable change none of them.
        """
        return self.model_dump(exclude=set(NOT_ANSWER_FIELDS))


class RunnerConfig(_Strict):
    """Concurrency, retry, timeout and budget settings shared by every model."""

    global_limit: int = Field(16, gt=0, description="Tasks in flight across all models.")
    per_model_limit: int = Field(8, gt=0, description="Tasks in flight for one model.")
    max_attempts: int = Field(10, gt=0, description="Attempts per model call, first included.")
    request_timeout_s: float = Field(120.0, gt=0, description="Timeout of one model call.")
    task_timeout_s: float = Field(900.0, gt=0, description="Timeout of one whole task.")
    max_tokens: int = Field(4096, gt=0, description="Default completion token budget.")
    backoff_base_s: float = Field(1.0, ge=0, description="First retry delay before jitter.")
    backoff_max_s: float = Field(30.0, ge=0, description="Largest delay between attempts.")
    retry_after_cap_s: float = Field(60.0, ge=0, description="Largest Retry-After honoured.")
    endpoint_down_after: int = Field(
        5,
        gt=0,
        description="Refused connections in a row after which a model's endpoint is taken as "
        "down: its remaining tasks become `endpoint_down` error rows, for `--resume` to retry.",
    )
    fail_on_error: float = Field(
        0.2, ge=0, le=1, description="Share of error rows above which `run` exits non-zero."
    )
    ramp_up_starts_per_s: float = Field(
        1000.0, ge=0, description="Pace of the first wave of task starts (0: no ramp-up)."
    )
    ramp_up_burst: int = Field(
        16, gt=0, description="Starts of the first wave let through at once before the pace."
    )
    tool_max_rounds: int = Field(6, gt=0, description="Model turns in one tool-calling loop.")
    max_response_chars: int = Field(
        1_000_000, gt=0, description="Longest reply text kept; longer ones are cut and marked."
    )
    max_response_bytes: int = Field(
        16 * 1024 * 1024,
        ge=1024,
        description="Largest reply body read, decoded; a larger one is a `response_too_large` "
        "error row, not retried.",
    )
    max_compression_ratio: float = Field(
        100.0,
        ge=1,
        description="Most a compressed reply may inflate (decoded : sent bytes), judged past "
        "1 MiB; beyond it the call is `response_too_large`.",
    )
    cache: bool = Field(True, description="Replay identical requests from the response cache.")
    epochs: int = Field(1, gt=0, description="Times each task is run.")
    max_cost_usd: float | None = Field(
        None, gt=0, description="Stop the run once its model calls have cost this many USD."
    )
    max_total_tokens: int | None = Field(
        None, gt=0, description="Stop the run once its model calls have used this many tokens."
    )


class RunSelection(_Strict):
    """What the DVC pipeline runs by default."""

    models: list[str] = Field(default_factory=list, description="Models the pipeline runs.")
    benchmarks: list[str] = Field(
        default_factory=list, description="Benchmarks to run; empty means every active one."
    )


class TrackingConfig(_Strict):
    """MLflow tracking settings."""

    enabled: bool = Field(True, description="Log stages to MLflow.")
    experiment: str = Field("llm-eval", description="MLflow experiment name.")


class BenchmarkConfig(_Strict):
    """One benchmark: a JSONL file of tasks of one type, a flow, a prompt and a scorer."""

    path: NonEmptyStr = Field(description="Task file, relative to the config root.")
    task_type: TaskType
    scorer: NonEmptyStr = Field("exact", description="A registered scorer kind.")
    prompt: str = Field("default", description="Prompt entry in prompts.yaml.")
    flow: str | None = Field(
        None, description="A registered flow; by default the task type's flow."
    )
    tools: list[str] = Field(default_factory=list, description="Tools offered to the model.")
    active: bool = Field(True, description="Part of the default suite.")
    description: str = ""

    @property
    def resolved_flow(self) -> str:
        """The flow that runs this benchmark's tasks."""
        if self.flow is not None:
            return self.flow
        return DEFAULT_FLOW[self.task_type]


class PromptConfig(_Strict):
    """A prompt: system text, an optional template for the user turn, follow-up turns."""

    system: str | None = None
    user_template: str = Field("{question}", description="`{question}` is replaced.")
    followups: list[str] = Field(default_factory=list, description="Multi-round follow-ups.")

    @field_validator("user_template")
    @classmethod
    def _has_question(cls, value: str) -> str:
        if "{question}" not in value:
            raise ValueError("user_template must contain {question}")
        return value


class ToolConfig(BaseModel):
    """One tool's entry in `configs/tools.yaml`: `enabled`, and the tool's own settings.

    The other keys belong to the tool: the settings model it registers (a subclass of this
    one, such as `python_exec`'s limits) checks them, and `validate` reports them by line.
    """

    model_config = ConfigDict(extra="allow", frozen=True)

    enabled: bool = True

    def summary(self) -> str:
        """One line for `list-config`: the tool's own settings as configured."""
        return ", ".join(f"{key} {value}" for key, value in (self.model_extra or {}).items())


# --------------------------------------------------------------------------- tasks


class Message(BaseModel):
    """One chat message of a multi-turn task."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    role: Literal["system", "user", "assistant"]
    content: NonEmptyStr


class _TaskBase(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: NonEmptyStr
    answer: NonEmptyStr
    answer_regex: str | None = None
    accepted_answers: list[NonEmptyStr] = Field(
        default_factory=list, description="Other fully correct surface forms of the answer."
    )
    distractors: list[NonEmptyStr] = Field(
        default_factory=list, description="Near misses in the passage; committing to one is wrong."
    )
    answer_script: AnswerScript | None = Field(
        None, description="`greek`: the answer must be written in Greek script."
    )
    answer_format: AnswerFormat | None = Field(
        None, description="`digits`: numbers as digits; `verbatim`: exactly as given, accents too."
    )
    difficulty: Difficulty | None = None
    category: NonEmptyStr = "default"

    @model_validator(mode="after")
    def _distractors_differ(self) -> Self:
        from llm_eval.scoring.normalize import fold_text

        answers = {fold_text(a) for a in (self.answer, *self.accepted_answers)}
        clashes = [d for d in self.distractors if fold_text(d) in answers]
        if clashes:
            raise ValueError(f"distractors equal to an accepted answer: {clashes}")
        return self

    @field_validator("answer", mode="before")
    @classmethod
    def _answer_as_text(cls, value: Any) -> Any:
        # Integer answers (AIMO) are stored as numbers upstream; scoring compares text.
        if isinstance(value, int | float) and not isinstance(value, bool):
            return str(value)
        return value

    @field_validator("answer_regex")
    @classmethod
    def _regex_compiles(cls, value: str | None) -> str | None:
        import re

        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"answer_regex does not compile: {exc}") from exc
        return value


class SingleTurnTask(_TaskBase):
    """A question answered in one model turn."""

    task_type: Literal["single_turn"]
    question: NonEmptyStr


class MultiTurnTask(_TaskBase):
    """A conversation so far; the model answers its last user turn."""

    task_type: Literal["multi_turn"]
    turns: list[Message] = Field(min_length=1)

    @model_validator(mode="after")
    def _ends_with_user(self) -> MultiTurnTask:
        if self.turns[-1].role != "user":
            raise ValueError("the last turn must have role 'user'")
        return self


class ToolCallingTask(_TaskBase):
    """A question the model may answer by calling tools."""

    task_type: Literal["tool_calling"]
    question: NonEmptyStr
    expected_tools: list[str] = Field(default_factory=list)


Task = SingleTurnTask | MultiTurnTask | ToolCallingTask
"""Any task; a task file line is parsed into one of these by its `task_type`."""


KEY_FIELDS = frozenset(
    {"answer", "answer_regex", "accepted_answers", "distractors", "answer_script", "answer_format"}
)
"""The task fields that grade a reply and are never sent to a model. `score` reads them from
today's task files, and the `run` stage's inputs leave them out, so fixing a key rescores
without calling a model."""

KeyUnchecked = Literal["task_missing", "task_text_changed"]
"""Why today's key could not grade a row: its task is gone from the task files (removed or
renamed), or its question or turns changed since the row was made."""


class GradingKey(BaseModel):
    """What grades a reply: the answer key of its task and the benchmark's scorer kind."""

    model_config = ConfigDict(frozen=True)

    answer: str
    answer_regex: str | None = None
    accepted_answers: list[str] = Field(default_factory=list)
    distractors: list[str] = Field(default_factory=list)
    answer_script: str | None = None
    answer_format: str | None = None
    scorer: str

    @classmethod
    def of_task(cls, task: Task, scorer: str) -> GradingKey:
        """The key of `task` as its file gives it today, graded by `scorer`."""
        return cls(scorer=scorer, **task.model_dump(include=set(KEY_FIELDS)))


# --------------------------------------------------------------------------- traces


CostSource = Literal["configured", "price table", "mixed"]
"""Where a cost came from: the model's prices in configs/models.yaml, LiteLLM's table, or both."""


class Usage(BaseModel):
    """Token and cost accounting of one or more calls; unknown stays None, never 0."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    reasoning_tokens: int | None = None
    total_tokens: int | None = None
    cost_usd: float | None = None
    cost_source: CostSource | None = None
    """Where `cost_usd` came from: the model's prices in configs/models.yaml, or LiteLLM's table."""

    def plus(self, other: Usage) -> Usage:
        """Sum two usages; a field is known when it is known on either side."""

        def add(a: float | None, b: float | None) -> Any:
            if a is None and b is None:
                return None
            return (a or 0) + (b or 0)

        return Usage(
            prompt_tokens=add(self.prompt_tokens, other.prompt_tokens),
            completion_tokens=add(self.completion_tokens, other.completion_tokens),
            reasoning_tokens=add(self.reasoning_tokens, other.reasoning_tokens),
            total_tokens=add(self.total_tokens, other.total_tokens),
            cost_usd=add(self.cost_usd, other.cost_usd),
            cost_source=_merged_source(self.cost_source, other.cost_source),
        )


def _merged_source(first: CostSource | None, second: CostSource | None) -> CostSource | None:
    if first is None or first == second:
        return second
    return first if second is None else "mixed"


class ToolCallRecord(BaseModel):
    """One tool call the model made and what the tool returned."""

    id: str
    name: str
    arguments: str = Field(description="Arguments exactly as the model sent them (JSON text).")
    result: str | None = Field(None, description="Content returned to the model.")
    error: str | None = Field(None, description="Why the call could not run, if it could not.")
    duration_s: float | None = None
    isolation: list[str] = Field(default_factory=list, description="Sandbox measures applied.")
    budget_wait_s: float | None = Field(
        None, description="Seconds the call waited for room in the sandboxes' memory budget."
    )
    refused: bool = Field(
        False, description="The benchmark does not offer this tool, so the call did not run."
    )


class CallRecord(BaseModel):
    """One model call inside a task (a task may make several: rounds, tool loops)."""

    latency_s: float = Field(description="Seconds from sending to the reply, slot wait left out.")
    queue_s: float = Field(0.0, description="Seconds waiting for a free connection slot.")
    attempts: int = Field(description="Attempts made, first included.")
    cached: bool = False
    usage: Usage = Field(default_factory=Usage)
    finish_reason: str | None = None
    started_at: str | None = None
    truncated: bool = Field(False, description="The reply was cut to `max_response_chars`.")


class ErrorInfo(BaseModel):
    """Why a row ended in the `error` state; the message is redacted of secrets."""

    kind: str
    message: str
    status_code: int | None = None
    attempts: int = 0
    partial_content: str | None = None
    """Text the model generated before the provider reported the error: kept to read,
    never scored."""


class TraceRow(BaseModel):
    """One model x task x epoch: everything sent, received and decided."""

    run_id: str
    model: str
    model_label: str
    provider: str
    simulated: bool
    benchmark: str
    task_id: str
    task_type: TaskType
    category: str
    epoch: int = 0
    answer: str
    answer_regex: str | None = None
    accepted_answers: list[str] = Field(default_factory=list)
    distractors: list[str] = Field(default_factory=list)
    answer_script: str | None = None
    answer_format: str | None = None
    difficulty: str | None = None
    scorer: str
    messages: list[dict[str, Any]] = Field(description="The final conversation sent/received.")
    response: str | None = Field(None, description="The final assistant text that is scored.")
    reasoning: str | None = None
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    calls: list[CallRecord] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    latency_s: float | None = Field(None, description="Wall time of the whole task.")
    attempts: int = Field(0, description="Attempts over all calls of the task.")
    from_cache: bool = Field(
        False,
        description="A reply was replayed from the response cache: its latency and cost are "
        "the original call's, not paid again.",
    )
    status: RowStatus
    error: ErrorInfo | None = None
    score: ScoreResult | None = None
    settings: dict[str, Any] = Field(
        default_factory=dict, description="The settings that decided the answer, redacted."
    )
    question_digest: str | None = Field(
        None, description="Digest of the task text sent (question or turns); None: not recorded."
    )
    run_key: GradingKey | None = Field(
        None,
        description="The key the row was made under, kept when today's key (in the key fields "
        "above) differs from it; None: the key fields are the ones the run saw.",
    )
    key_unchecked: KeyUnchecked | None = Field(
        None, description="Why today's key was not applied: the row keeps the key it ran under."
    )
    started_at: str
    finished_at: str

    def answer_key(self) -> AnswerKey:
        """What the scorer needs: the answer, its variants, decoys and the question asked."""
        question = next(
            (str(m.get("content")) for m in self.messages if m.get("role") == "user"), None
        )
        return AnswerKey(
            self.answer, self.answer_regex, tuple(self.accepted_answers),
            tuple(self.distractors), question, self.answer_script, self.answer_format,
        )  # fmt: skip

    def grading_key(self) -> GradingKey:
        """The key and scorer kind in this row's fields."""
        return GradingKey(scorer=self.scorer, **self.model_dump(include=set(KEY_FIELDS)))

    @property
    def cut_off(self) -> bool:
        """Whether the scored reply was cut off: the token limit (finish reason `length`)
        or `max_response_chars` ended it."""
        if not self.calls:
            return False
        last = self.calls[-1]
        return last.truncated or last.finish_reason == "length"

    @property
    def key(self) -> RowKey:
        """Identity of a row: a resumed run never holds two rows with one key."""
        return (self.model, self.benchmark, self.task_id, self.epoch)
