"""Trace JSONL files: an append-and-flush writer, a tolerant reader, resume bookkeeping."""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from pydantic import ValidationError

from llm_eval.errors import ConfigError, Problem, UsageError
from llm_eval.schemas import RowKey, TraceRow


class AsyncTraceWriter:
    """Appends one row per line and flushes it, so a crash loses at most the row in flight."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = asyncio.Lock()
        self._handle: TextIO | None = None

    async def __aenter__(self) -> AsyncTraceWriter:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._handle = self.path.open("a", encoding="utf-8")
        return self

    async def __aexit__(self, *_: object) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    async def write(self, row: TraceRow) -> None:
        """Append `row`; the write is small, so doing it inline beats a thread hop."""
        line = row.model_dump_json() + "\n"
        async with self._lock:
            assert self._handle is not None, "writer used outside `async with`"
            self._handle.write(line)
            self._handle.flush()


TRACE_SIGNATURE = '{"run_id":'
"""How every line of a trace file starts (pydantic dumps `run_id` first): a file whose first
line does not start so was not written by llm-eval."""


def read_rows(path: Path, *, tolerate_torn_tail: bool = True) -> list[TraceRow]:
    """Every row of a trace file.

    A torn last line (a crash mid-write, possibly inside a multi-byte character) is skipped;
    any other bad line (invalid UTF-8, not JSON, not a row) is an error naming `path:line`.
    """
    rows: list[TraceRow] = []
    problems: list[Problem] = []
    lines = path.read_bytes().split(b"\n")
    if lines and not lines[-1].strip():
        lines.pop()
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            rows.append(TraceRow.model_validate_json(raw.decode("utf-8")))
        except UnicodeDecodeError as exc:
            if tolerate_torn_tail and number == len(lines):
                break
            problems.append(Problem(str(path), number, f"not valid UTF-8 (byte {exc.start})"))
        except (ValidationError, ValueError) as exc:
            if tolerate_torn_tail and number == len(lines):
                break
            problems.append(Problem(str(path), number, f"not a trace row: {_first_error(exc)}"))
    if problems:
        raise ConfigError(problems)
    return rows


def is_trace_file(path: Path) -> bool:
    """Whether `path` is empty or starts like a trace of this tool."""
    with path.open("rb") as handle:
        head = handle.read(len(TRACE_SIGNATURE) + 64).lstrip()
    return not head or head.startswith(TRACE_SIGNATURE.encode())


@contextmanager
def exclusive_writer(path: Path) -> Iterator[None]:
    """Hold the trace file's lock (`<file>.lock`) for the block; refuse a second writer.

    Two runs appending to one file would lose rows or pay for every request twice, so the
    second one stops before anything is read or written.
    """
    lock_path = path.with_name(path.name + ".lock")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        lock = lock_path.open("a")
    except OSError as exc:
        raise UsageError(
            f"--output: cannot create the lock file {lock_path} ({exc.strerror or exc}); choose "
            "an --output in a writable folder"
        ) from None
    with lock:
        try:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UsageError(
                f"--output: {path} is being written by another llm-eval run (it holds "
                f"{lock_path.name}); wait for it to finish or choose another file"
            ) from None
        try:
            yield
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)


def read_many(paths: Iterable[Path]) -> list[TraceRow]:
    """Rows of several trace files, in order."""
    return [row for path in paths for row in read_rows(path)]


def _first_error(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        error = exc.errors()[0]
        return f"{'.'.join(map(str, error['loc']))}: {error['msg']}"
    return str(exc).splitlines()[0]


def prepare_resume(
    path: Path,
    current_settings: Callable[[TraceRow], dict[str, Any]] | None = None,
    *,
    allow_changed_settings: bool = False,
    still_current: Callable[[TraceRow], bool] | None = None,
    refresh: Callable[[TraceRow], TraceRow] | None = None,
) -> dict[RowKey, TraceRow]:
    """Keep finished rows, drop error rows and any torn tail; rewrite the file atomically.

    Rows made under other settings than this run's (`current_settings` of a row's model and
    benchmark) are refused, naming what changed, unless `allow_changed_settings`. A row that
    `still_current` rejects (its task's text changed) is dropped, so it runs again; each kept
    row passes `refresh` (rescored under its task's key today). Nothing is rewritten before
    every check passed. Returns the kept rows by key.
    """
    if not path.exists():
        return {}
    if not is_trace_file(path):
        raise UsageError(f"--resume: {path} is not a trace file written by llm-eval")
    kept: dict[RowKey, TraceRow] = {}
    for row in read_rows(path):
        if row.status != "error" and (still_current is None or still_current(row)):
            kept[row.key] = row  # a later duplicate replaces an earlier one
    if current_settings is not None and not allow_changed_settings:
        _refuse_changed_settings(path, kept.values(), current_settings)
    if refresh is not None:
        kept = {key: refresh(row) for key, row in kept.items()}
    _rewrite(path, kept.values())
    return kept


def prepare_rerun(
    path: Path,
    replacing: set[RowKey],
    current_settings: Callable[[TraceRow], dict[str, Any]] | None = None,
    *,
    allow_changed_settings: bool = False,
    still_listed: Callable[[TraceRow], bool] | None = None,
) -> dict[RowKey, TraceRow]:
    """Keep every row except those a rerun replaces (and those `still_listed` rejects: rows
    of deleted tasks), rewriting the file atomically first.

    The replaced rows leave the file before their reruns are appended, so a row is never
    there twice; a rerun cut short leaves them missing, which `--resume` fills. Returns the
    kept rows by key.
    """
    if not path.exists():
        return {}
    if not is_trace_file(path):
        raise UsageError(f"--output: {path} is not a trace file written by llm-eval")
    kept: dict[RowKey, TraceRow] = {}
    for row in read_rows(path):
        if row.key not in replacing and (still_listed is None or still_listed(row)):
            kept[row.key] = row
    if current_settings is not None and not allow_changed_settings:
        _refuse_changed_settings(
            path, kept.values(), current_settings, option="task-id / --only-wrong"
        )
    _rewrite(path, kept.values())
    return kept


def _rewrite(path: Path, rows: Iterable[TraceRow]) -> None:
    """Replace the file by `rows`, durably (a crash leaves the old or the new file)."""
    temporary = path.with_suffix(path.suffix + ".resume-tmp")
    with temporary.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(row.model_dump_json() + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


def _refuse_changed_settings(
    path: Path,
    rows: Iterable[TraceRow],
    current: Callable[[TraceRow], dict[str, Any]],
    option: str = "resume",
) -> None:
    changes: dict[str, str] = {}
    for row in rows:
        now = current(row)
        for key in sorted(set(row.settings) | set(now)):
            before, after = row.settings.get(key), now.get(key)
            if before != after:
                changes.setdefault(f"{row.model}.{key}", f"{before!r} -> {after!r}")
    if changes:
        listed = "; ".join(f"{key}: {change}" for key, change in list(changes.items())[:10])
        raise UsageError(
            f"--{option}: {path} holds rows made under other settings ({listed}); run afresh "
            "into another file, or add --allow-changed-settings to mix them knowingly"
        )


def write_rows(path: Path, rows: Iterable[TraceRow]) -> None:
    """Write a whole file of rows atomically (used by rescoring)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(path.suffix + ".tmp")
    with temporary.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(row.model_dump_json() + "\n")
    os.replace(temporary, path)


def dump_json(path: Path, data: object) -> None:
    """Write pretty, key-sorted JSON (stable bytes for DVC metrics)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
