"""What the `run` stage sends to the models, digested, so that DVC reruns it only for that.

A task file holds two kinds of field: what a model is sent (the question or turns, and what
decides the plan: ids, categories, order) and the key that grades the reply (`KEY_FIELDS`),
which `score` reads from today's files. The `validate` stage writes this extract, and the
`run` stage depends on it instead of on `data/` and `configs/benchmarks.yaml`: fixing a key
or a benchmark's scorer then reruns `score` and `report` and calls no model. Everything else
in a task file, and every benchmark setting but the scorer and the file's name, is in the
extract, so a field added later is covered without a change here.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from llm_eval.config.loading import AppConfig
from llm_eval.config.task_files import read_task_file
from llm_eval.schemas import KEY_FIELDS, MultiTurnTask, Task

NOT_SENT_BENCHMARK_FIELDS = frozenset({"scorer", "description", "path"})
"""Benchmark settings that change no request: the scorer grades afterwards, the description
is for people, and the file's content is digested whatever its name."""


def question_digest(task: Task) -> str:
    """Digest of the task text a model is sent: its question, or its turns."""
    if isinstance(task, MultiTurnTask):
        return digest([turn.model_dump() for turn in task.turns])
    return digest(task.question)


def sent_fields(task: Task) -> dict[str, Any]:
    """The task without its key: every field that can change what a run sends or plans."""
    return task.model_dump(exclude=set(KEY_FIELDS))


def run_inputs(config: AppConfig) -> dict[str, Any]:
    """Per benchmark: the settings a run uses, its task count and a digest of its tasks
    without their keys, in file order (the order is the plan's)."""
    benchmarks: dict[str, Any] = {}
    for name, bench in sorted(config.benchmarks.items()):
        loaded = read_task_file(config.benchmark_path(name), expected_type=bench.task_type)
        tasks = [sent_fields(entry.task) for entry in loaded.tasks]
        benchmarks[name] = {
            "settings": bench.model_dump(exclude=set(NOT_SENT_BENCHMARK_FIELDS)),
            "tasks": len(tasks),
            "sent_digest": digest(tasks),
        }
    return {"benchmarks": benchmarks}


def digest(value: Any) -> str:
    """A short, stable digest of JSON-like data (key order does not matter)."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
