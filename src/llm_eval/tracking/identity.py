"""A trace row's identity in MLflow: its trace id and tags follow from the row alone.

A row's key is (the run id its results carry, model, benchmark, task id, epoch). The run id
is what identifies a results file across its life: `run` writes it into every row, `--resume`
keeps the rows (and run ids) it keeps, `score` copies it into the scored file, while the
file's path changes from stage to stage and between clones. The trace id is a digest of the
key, so writing a row's trace twice names the same trace (the second write is skipped), and
`score` finds the trace of each row it scores without asking which MLflow run made it.
Pure Python: no MLflow import here.
"""

from __future__ import annotations

import functools
import hashlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from llm_eval.schemas import TraceRow

TRACE_ID_PREFIX = "tr-"
"""MLflow's trace id: this prefix and the OpenTelemetry trace id in 32 hex digits."""

KEY_TAGS = (
    "llm_eval.run_id",
    "llm_eval.model",
    "llm_eval.benchmark",
    "llm_eval.task_id",
    "llm_eval.epoch",
)
"""The trace tags that hold a row's key, in `trace_key` order."""

RUN_ID_TAG = KEY_TAGS[0]

TraceKey = tuple[str, str, str, str, str]


def trace_key(row: TraceRow) -> TraceKey:
    """(run id, model, benchmark, task id, epoch) of a row, as its trace's tags hold them."""
    return (row.run_id, row.model, row.benchmark, row.task_id, str(row.epoch))


@functools.lru_cache(maxsize=8192)
def key_digest(key: TraceKey) -> bytes:
    """sha256 of the key; fields joined by NUL, which no field can contain."""
    return hashlib.sha256("\0".join(("llm-eval-trace", *key)).encode()).digest()


def otel_trace_id(key: TraceKey) -> int:
    """The 128-bit OpenTelemetry trace id of the key's trace."""
    return int.from_bytes(key_digest(key)[:16], "big")


def trace_id_of(key: TraceKey) -> str:
    """The MLflow trace id of the key's trace: the same on every machine and every write."""
    return f"{TRACE_ID_PREFIX}{otel_trace_id(key):032x}"


def span_id_of(key: TraceKey, index: int) -> int:
    """The 64-bit id of the trace's `index`-th span (0 is the root); never 0, which OTel
    reserves for "no span"."""
    digest = hashlib.sha256(key_digest(key) + index.to_bytes(4, "big")).digest()
    return int.from_bytes(digest[:8], "big") or 1


def key_tags(key: TraceKey) -> dict[str, str]:
    """The trace tags that name the key."""
    return dict(zip(KEY_TAGS, key, strict=True))


def key_from_tags(tags: dict[str, str]) -> TraceKey | None:
    """The key a trace's tags name; None for a trace without them (not logged by llm-eval)."""
    values = tuple(tags.get(tag) for tag in KEY_TAGS)
    if any(value is None for value in values):
        return None
    run_id, model, benchmark, task_id, epoch = (str(value) for value in values)
    return (run_id, model, benchmark, task_id, epoch)
