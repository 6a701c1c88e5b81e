"""One MLflow trace per trace row: a root span for the task, a span per LLM call and per tool
call, with the start times and durations the row recorded.

`plan_spans` is pure (rows in, span plans out) so the timing and message mapping is testable
without MLflow; `bulk_traces` writes the plans, linked to the stage's run. Every text goes
through `llm_eval.redaction.redact` first.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from llm_eval.redaction import redact, secret_values

if TYPE_CHECKING:
    from llm_eval.schemas import CallRecord, TraceRow

NS = 1_000_000_000


@dataclass
class SpanPlan:
    """A span to log: its place in time, its payload and whether it failed."""

    name: str
    span_type: str
    start_ns: int
    end_ns: int
    inputs: Any = None
    outputs: Any = None
    attributes: dict[str, Any] = field(default_factory=dict)
    error: bool = False


@dataclass
class TracePlan:
    """The root span of one row's trace and its children, in time order."""

    root: SpanPlan
    children: list[SpanPlan]
    tags: dict[str, str]


def redacted(value: Any) -> Any:
    """`value` with every string inside it redacted."""
    return _redacted(value, tuple(secret_values()))


def _redacted(value: Any, secrets: tuple[str, ...]) -> Any:
    if isinstance(value, str):
        return _redact_text(value, secrets)
    if isinstance(value, dict):
        return {str(key): _redacted(item, secrets) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_redacted(item, secrets) for item in value]
    return value


@functools.lru_cache(maxsize=4096)
def _redact_text(text: str, secrets: tuple[str, ...]) -> str:
    """`redact(text)`, remembered: a row's conversation is redacted once per call span and
    every row repeats the system prompt. `secrets` (the environment's, which `redact` reads
    itself) is part of the key, so a changed environment is never served an old result."""
    del secrets
    return redact(text)


def to_ns(stamp: str | None) -> int | None:
    """An ISO-8601 timestamp as nanoseconds since the epoch; None if absent or unparsable."""
    if not stamp:
        return None
    try:
        return int(datetime.fromisoformat(stamp).timestamp() * NS)
    except ValueError:
        return None


def call_windows(row: TraceRow) -> list[tuple[list[dict[str, Any]], dict[str, Any] | None]]:
    """(messages sent, assistant message received) of each call, from the final conversation.

    The model's replies are the last assistant messages of the conversation (earlier ones in a
    multi-turn task were given, not generated); an error row's last call got no reply.
    """
    messages = row.messages
    produced = len(row.calls) - (1 if row.status == "error" and row.calls else 0)
    replies = [i for i, message in enumerate(messages) if message.get("role") == "assistant"]
    replies = replies[len(replies) - produced :] if 0 < produced <= len(replies) else []
    windows: list[tuple[list[dict[str, Any]], dict[str, Any] | None]] = [
        (messages[:index], messages[index]) for index in replies
    ]
    while len(windows) < len(row.calls):
        windows.append((list(messages), None))
    return windows


def _usage_attributes(call: CallRecord) -> dict[str, Any]:
    from llm_eval.tracking.mlflow_rules import SpanAttributeKey

    usage = call.usage
    attributes: dict[str, Any] = {
        "attempts": call.attempts,
        "cached": call.cached,
        "latency_s": call.latency_s,
        "finish_reason": call.finish_reason,
        "reasoning_tokens": usage.reasoning_tokens,
    }
    if usage.cost_usd is not None:  # the row's own cost; a null cost would drop the span
        attributes[SpanAttributeKey.LLM_COST] = {"total_cost": usage.cost_usd}
    if usage.prompt_tokens is not None or usage.completion_tokens is not None:
        attributes[SpanAttributeKey.CHAT_USAGE] = {
            "input_tokens": usage.prompt_tokens or 0,
            "output_tokens": usage.completion_tokens or 0,
            "total_tokens": usage.total_tokens
            or (usage.prompt_tokens or 0) + (usage.completion_tokens or 0),
        }
    return attributes


def _llm_spans(row: TraceRow, start_ns: int) -> tuple[list[SpanPlan], dict[str, int]]:
    """Spans of the model calls; also where each tool call id's round ended (ns)."""
    spans: list[SpanPlan] = []
    round_end: dict[str, int] = {}
    cursor = start_ns
    for index, (call, (sent, reply)) in enumerate(zip(row.calls, call_windows(row), strict=True)):
        begin = max(to_ns(call.started_at) or cursor, start_ns)
        end = begin + int(max(call.latency_s, 0.0) * NS)
        failed = reply is None and row.status == "error"
        spans.append(
            SpanPlan(
                name=f"llm_call_{index + 1}",
                span_type="CHAT_MODEL",
                start_ns=begin,
                end_ns=end,
                inputs=redacted({"messages": sent}),
                outputs=redacted(reply) if reply is not None else None,
                attributes=_usage_attributes(call),
                error=failed,
            )
        )
        for tool_call in (reply or {}).get("tool_calls") or []:
            round_end[str(tool_call.get("id"))] = end
        cursor = end
    return spans, round_end


def _tool_spans(row: TraceRow, round_end: dict[str, int], fallback_ns: int) -> list[SpanPlan]:
    """Spans of the tool calls, each after the model call that asked for it, back to back."""
    spans: list[SpanPlan] = []
    next_start: dict[int, int] = {}
    for record in row.tool_calls:
        anchor = round_end.get(record.id, fallback_ns)
        begin = next_start.get(anchor, anchor)
        end = begin + int(max(record.duration_s or 0.0, 0.0) * NS)
        next_start[anchor] = end
        spans.append(
            SpanPlan(
                name=record.name,
                span_type="TOOL",
                start_ns=begin,
                end_ns=end,
                inputs=redacted({"arguments": record.arguments}),
                outputs=redacted({"result": record.result, "error": record.error}),
                attributes={
                    "tool_call_id": record.id,
                    "isolation": list(record.isolation),
                    "refused": record.refused,
                },
                error=record.error is not None,
            )
        )
    return spans


def plan_spans(row: TraceRow) -> TracePlan:
    """The whole trace of one row; times come from the row, estimated only where it has none."""
    start = to_ns(row.started_at) or 0
    llm, round_end = _llm_spans(row, start)
    tools = _tool_spans(row, round_end, llm[-1].end_ns if llm else start)
    children = sorted([*llm, *tools], key=lambda span: span.start_ns)
    end = max([to_ns(row.finished_at) or start, *(span.end_ns for span in children)])
    first_reply = next(
        (i for i, m in enumerate(row.messages) if m.get("role") == "assistant"), None
    )
    score = row.score
    root = SpanPlan(
        name=f"{row.benchmark}/{row.task_id}",
        span_type="AGENT" if row.task_type == "tool_calling" else "CHAIN",
        start_ns=start,
        end_ns=end,
        inputs=redacted({"messages": row.messages[:first_reply]}),
        outputs=redacted(
            {
                "response": row.response,
                "status": row.status,
                "expected": row.answer,
                "extracted": score.extracted if score else None,
                "method": score.method if score else None,
            }
        ),
        attributes=_root_attributes(row),
        error=row.status == "error",
    )
    return TracePlan(root=root, children=children, tags=_trace_tags(row))


def _root_attributes(row: TraceRow) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        "model": row.model,
        "category": row.category,
        "provisional_status": row.status,
        "provider": row.provider,
        "simulated": row.simulated,
        "epoch": row.epoch,
        "attempts": row.attempts,
        "latency_s": row.latency_s,
        "total_tokens": row.usage.total_tokens,
        "cost_usd": row.usage.cost_usd,
    }
    if row.error is not None:
        attributes["error_kind"] = row.error.kind
        attributes["error_message"] = redact(row.error.message)
    return attributes


def _trace_tags(row: TraceRow) -> dict[str, str]:
    """The row's key (see `identity`): few tags, since each is a stored row per trace; the
    category and the run's provisional verdict are attributes of the root span, the verdict
    of record is the `correct` assessment."""
    from llm_eval.tracking.identity import key_tags, trace_key

    return key_tags(trace_key(row))
