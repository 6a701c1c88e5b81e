"""What the `run` stage sends to the models, digested, so that DVC reruns it only for that.

A task file holds two kinds of field: what a model is sent (the question or turns, and what
decides the plan: ids, categories, order) and the key that grades the reply (`KEY_FIELDS`),
which `score` reads from today's files. The `validate` stage writes this extract, and the
`run` stage depends on it instead of on `data/` and `configs/benchmarks.yaml`: fixing a key
or a benchmark's scorer then reruns `score` and `report` and calls no model. Everything else
in a task file, and every benchmark setting but the scorer and the file's name, is in the
extract, so a field added later is covered without a change here.

The extract also digests the other things a run depends on: the prompt and tool files and
the model-running code (`RUN_CODE`). `dvc.yaml`'s `run` stage then has one file dependency
instead of a score of them, which keeps `dvc exp show` narrow (each dependency is a column),
and a change to the scorer, the reports or the MLflow logging still calls no model.
`tests/pipeline/test_stage_deps.py` checks that `RUN_CODE` covers every module `llm-eval run`
imports.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import llm_eval
from llm_eval.config.loading import AppConfig
from llm_eval.config.task_files import read_task_file
from llm_eval.schemas import KEY_FIELDS, MultiTurnTask, Task

RUN_CODE = (
    "__init__.py",
    "cli/__init__.py",
    "cli/app.py",
    "cli/progress.py",
    "cli/run.py",
    "config",
    "runner",
    "flows",
    "providers",
    "tools",
    "registry.py",
    "schemas.py",
    "verdicts.py",
    "errors.py",
    "redaction.py",
)
"""The package's files and folders `llm-eval run` loads, relative to the package. Left out on
purpose: scoring, reporting and tracking, which the `score` stage redoes."""

RUN_CONFIG_FILES = ("configs/prompts.yaml", "configs/tools.yaml")
"""Config files a run reads whole, relative to the config root."""

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
    files = {name: file_digest(config.root / name) for name in RUN_CONFIG_FILES}
    return {"benchmarks": benchmarks, "files": files, "code": code_digest()}


def code_digest(package: Path | None = None) -> str:
    """Digest of the model-running code (`RUN_CODE`): paths and bytes, in sorted order."""
    root = package if package is not None else Path(llm_eval.__file__).parent
    hashed = hashlib.sha256()
    for entry in RUN_CODE:
        path = root / entry
        found = [path]
        if path.is_dir():  # every file but compiled bytecode, as DVC hashes a folder
            found = sorted(
                p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts
            )
        for file in found:
            hashed.update(file.relative_to(root).as_posix().encode() + b"\0")
            hashed.update(file.read_bytes() + b"\0")
    return hashed.hexdigest()[:16]


def file_digest(path: Path) -> str:
    """Digest of a file's bytes; a missing file digests as such."""
    data = path.read_bytes() if path.is_file() else b"missing"
    return hashlib.sha256(data).hexdigest()[:16]


def digest(value: Any) -> str:
    """A short, stable digest of JSON-like data (key order does not matter)."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
