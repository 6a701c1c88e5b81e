"""Ask the judge model about the replies still unsure, through the runner's `ModelClient`
(retries, adaptive limit, redaction), whichever route the model is configured on.

Only replies the judge file does not already hold are asked (`scoring.judged`). A provider
error leaves the reply unasked and its row unsure; it is counted, never written as a verdict.
"""

from __future__ import annotations

import asyncio
import os
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from llm_eval.config.loading import AppConfig
from llm_eval.errors import MissingApiKeyError, ProviderError, UsageError
from llm_eval.providers.base import ChatRequest, Provider, TaskHint
from llm_eval.providers.registry import create_provider
from llm_eval.redaction import redact
from llm_eval.runner.model_client import ModelClient
from llm_eval.runner.ratelimit import AdaptiveLimiter
from llm_eval.runner.retry import RetryPolicy
from llm_eval.schemas import CallRecord, TraceRow
from llm_eval.scoring.judged import (
    MAX_KEPT_REPLY,
    PROMPT_DIGEST,
    JudgeKey,
    Judgement,
    judge_key,
    judge_messages,
    needs_judge,
    parse_judge_reply,
)
from llm_eval.scoring.reviews import now_stamp, reply_digest

ProviderFactory = Callable[..., Provider]


@dataclass
class JudgeOutcome:
    """What asking the judge did: the new verdicts to keep, and the calls that failed."""

    judgements: list[Judgement] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    """One redacted line per failed call (`task id: kind: message`)."""


def rows_to_ask(
    rows: Sequence[TraceRow], kept: dict[JudgeKey, Judgement], judge: str
) -> list[TraceRow]:
    """Unsure rows the judge has not seen, one per reply (the same reply is asked once)."""
    wanted: dict[JudgeKey, TraceRow] = {}
    for row in rows:
        key = judge_key(row, judge)
        if needs_judge(row) and key not in kept:
            wanted.setdefault(key, row)
    return list(wanted.values())


def ask_judge(
    rows: Sequence[TraceRow],
    judge: str,
    config: AppConfig,
    provider_factory: ProviderFactory = create_provider,
) -> JudgeOutcome:
    """Ask `judge` (a model of configs/models.yaml) about each row; blocking."""
    if judge not in config.models:
        known = ", ".join(sorted(config.models)) or "none"
        raise UsageError(f"--judge: no model {judge!r} in configs/models.yaml (known: {known})")
    key_variable = config.models[judge].api_key_env
    if key_variable and not os.environ.get(key_variable):
        raise MissingApiKeyError(
            f"--judge {judge}: the environment variable {key_variable} is not set; "
            "no request was sent"
        )
    if not rows:
        return JudgeOutcome()
    return asyncio.run(_ask_all(rows, judge, config, provider_factory(config.models[judge])))


async def _ask_all(
    rows: Sequence[TraceRow], judge: str, config: AppConfig, provider: Provider
) -> JudgeOutcome:
    runner = config.runner
    policy = RetryPolicy(
        runner.max_attempts, runner.backoff_base_s, runner.backoff_max_s, runner.retry_after_cap_s
    )
    ceiling = min(runner.per_model_limit, provider.max_connections() or runner.per_model_limit)
    client = ModelClient(
        provider, policy, AdaptiveLimiter(ceiling), None, rng=random.Random(),
        max_response_chars=runner.max_response_chars,
    )  # fmt: skip
    outcome = JudgeOutcome()
    try:
        results = await asyncio.gather(*(_ask_one(client, row, judge, config) for row in rows))
    finally:
        await provider.aclose()
    for row, result in zip(rows, results, strict=True):
        if isinstance(result, Judgement):
            outcome.judgements.append(result)
        else:
            outcome.failures.append(f"{row.benchmark}/{row.task_id}: {result}")
    return outcome


async def _ask_one(
    client: ModelClient, row: TraceRow, judge: str, config: AppConfig
) -> Judgement | str:
    """The judge's verdict on one row, or the redacted line of the error that prevented it."""
    model = config.models[judge]
    request = ChatRequest(
        model_name=judge,
        model=model,
        messages=judge_messages(row),
        tools=None,
        max_tokens=model.max_tokens or config.runner.max_tokens,
        timeout_s=config.runner.request_timeout_s,
    )
    hint = TaskHint(row.benchmark, row.task_id, "", row.task_type)
    calls: list[CallRecord] = []
    try:
        response = await client.call(client.request(request, hint), calls)
    except ProviderError as error:
        return redact(str(error))[:300]
    reply = (response.content or "")[:MAX_KEPT_REPLY]
    return Judgement(
        benchmark=row.benchmark,
        task_id=row.task_id,
        answer=row.answer,
        reply_sha256=reply_digest(row.response),
        timestamp=now_stamp(),
        judge=judge,
        prompt=PROMPT_DIGEST,
        verdict=parse_judge_reply(reply),
        reply=reply,
    )
