"""Trace JSONL files: an append-and-flush writer, a tolerant reader, resume bookkeeping."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TextIO

from pydantic import ValidationError

from llm_eval.errors import ConfigError, Problem
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


def read_rows(path: Path, *, tolerate_torn_tail: bool = True) -> list[TraceRow]:
    """Every row of a trace file; a torn last line (a crash mid-write) is skipped, others fail."""
    rows: list[TraceRow] = []
    problems: list[Problem] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            rows.append(TraceRow.model_validate_json(text))
        except (ValidationError, ValueError) as exc:
            if tolerate_torn_tail and number == len(lines):
                break
            problems.append(Problem(str(path), number, f"not a trace row: {_first_error(exc)}"))
    if problems:
        raise ConfigError(problems)
    return rows


def read_many(paths: Iterable[Path]) -> list[TraceRow]:
    """Rows of several trace files, in order."""
    return [row for path in paths for row in read_rows(path)]


def _first_error(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        error = exc.errors()[0]
        return f"{'.'.join(map(str, error['loc']))}: {error['msg']}"
    return str(exc).splitlines()[0]


def prepare_resume(path: Path) -> dict[RowKey, TraceRow]:
    """Keep finished rows, drop error rows and any torn tail; rewrite the file atomically.

    Returns the kept rows by key; the runner then runs only what is missing.
    """
    if not path.exists():
        return {}
    kept: dict[RowKey, TraceRow] = {}
    for row in read_rows(path):
        if row.status != "error":
            kept[row.key] = row  # a later duplicate replaces an earlier one
    temporary = path.with_suffix(path.suffix + ".resume-tmp")
    with temporary.open("w", encoding="utf-8") as handle:
        for row in kept.values():
            handle.write(row.model_dump_json() + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)
    return kept


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
