"""Read benchmark JSONL files into typed tasks, reporting every bad line as `path:line`."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from pydantic import Field, TypeAdapter, ValidationError

from llm_eval.errors import Problem
from llm_eval.schemas import Task

_TASK_ADAPTER: TypeAdapter[Task] = TypeAdapter(Annotated[Task, Field(discriminator="task_type")])


@dataclass(frozen=True)
class LoadedTask:
    """A task and the line it came from."""

    task: Task
    line: int


@dataclass(frozen=True)
class TaskFile:
    """The parsed content of one task file and the problems found in it."""

    path: Path
    tasks: list[LoadedTask]
    problems: list[Problem]


def read_task_file(path: Path, *, expected_type: str | None = None) -> TaskFile:
    """Parse every nonblank line of `path`; check type consistency and unique ids."""
    if not path.is_file():
        return TaskFile(path, [], [Problem(str(path), None, "task file not found")])
    tasks: list[LoadedTask] = []
    problems: list[Problem] = []
    first_line_of: dict[str, int] = {}
    for number, text in _nonblank_lines(path, problems):
        loaded = _parse_line(path, number, text, expected_type, problems)
        if loaded is None:
            continue
        _check_unique(path, loaded, first_line_of, problems)
        tasks.append(loaded)
    return TaskFile(path, tasks, problems)


def _nonblank_lines(path: Path, problems: list[Problem]) -> Iterable[tuple[int, str]]:
    """Nonblank lines as text; a line that is not UTF-8 is a problem at its own line."""
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                problems.append(Problem(str(path), number, f"not valid UTF-8 (byte {exc.start})"))
                continue
            if text.strip():
                yield number, text


def _parse_line(
    path: Path, number: int, text: str, expected: str | None, problems: list[Problem]
) -> LoadedTask | None:
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        problems.append(Problem(str(path), number, f"invalid JSON: {exc.msg} (column {exc.colno})"))
        return None
    except RecursionError:
        problems.append(Problem(str(path), number, "invalid JSON: nested too deeply"))
        return None
    if not isinstance(raw, dict):
        problems.append(Problem(str(path), number, "a task must be a JSON object"))
        return None
    declared = raw.get("task_type")
    if expected is not None and declared != expected:
        # Checked before the schema: a wrong type would otherwise surface as missing fields.
        problems.append(
            Problem(
                str(path),
                number,
                f"task {raw.get('id')!r} has task_type {declared!r}, "
                f"but the benchmark declares {expected!r}",
            )
        )
        return None
    try:
        return LoadedTask(_TASK_ADAPTER.validate_python(raw), number)
    except ValidationError as exc:
        for error in exc.errors():
            field = ".".join(str(part) for part in error["loc"]) or "task"
            problems.append(Problem(str(path), number, f"{field}: {error['msg']}"))
        return None


def _check_unique(
    path: Path, loaded: LoadedTask, first_line_of: dict[str, int], problems: list[Problem]
) -> None:
    task_id = loaded.task.id
    if task_id in first_line_of:
        problems.append(
            Problem(
                str(path),
                loaded.line,
                f"duplicate task id {task_id!r} (first on line {first_line_of[task_id]})",
            )
        )
    else:
        first_line_of[task_id] = loaded.line
