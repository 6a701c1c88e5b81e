"""A memory and process budget for a whole call, from a cgroup per call where one is writable.

cgroup v2 is used where its root offers the controller; otherwise a writable cgroup v1
hierarchy for it (many VMs and containers mount `memory` and `pids` that way). The memory
cgroup also counts the call's tmpfs pages, so files and processes share one budget. Nothing
here is required: without a writable cgroup the call falls back to rlimits and tmpfs caps.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import os
import re
import signal
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

from llm_eval.tools.python_exec.limits import BWRAP_PROCESSES, MIB, PythonExecLimits

_GROUP = "llm_eval_python_exec"
_CONTROLLERS = ("memory", "pids")
_REMOVE_ROUNDS = 100
_REMOVE_PAUSE_S = 0.02
_CALL_NUMBERS = itertools.count()


@dataclass(frozen=True, slots=True)
class _Hierarchy:
    """Where per-call groups for some controllers are made."""

    base: Path
    controllers: frozenset[str]
    v2: bool


@dataclass(slots=True)
class CallCgroups:
    """The groups one call runs in; its processes join every `procs_files` entry."""

    procs_files: list[Path] = field(default_factory=list)
    applied: list[str] = field(default_factory=list)
    _memory: tuple[Path, bool] | None = None  # (directory, is v2)
    _directories: list[tuple[Path, bool]] = field(default_factory=list)

    def oom_killed(self) -> bool:
        """True if the kernel killed a process of the call for passing its memory limit."""
        if self._memory is None:
            return False
        directory, v2 = self._memory
        name = "memory.events" if v2 else "memory.oom_control"
        try:
            text = (directory / name).read_text()
        except OSError:
            return False
        match = re.search(r"^oom_kill (\d+)$", text, re.MULTILINE)
        return match is not None and int(match[1]) > 0


@contextlib.asynccontextmanager
async def call_cgroups(limits: PythonExecLimits) -> AsyncIterator[CallCgroups]:
    """Per-call groups with the call's memory and process limits, emptied and removed after."""
    groups = CallCgroups()
    name = f"call-{_pid_namespace()}-{os.getpid()}-{next(_CALL_NUMBERS)}"
    try:
        for hierarchy in _hierarchies():
            _make_group(groups, hierarchy, hierarchy.base / name, limits)
        yield groups
    finally:
        for directory, v2 in groups._directories:
            await _empty_and_remove(directory, v2)


def _make_group(
    groups: CallCgroups, hierarchy: _Hierarchy, directory: Path, limits: PythonExecLimits
) -> None:
    """Create one group and set the limits of the controllers it carries; skip on failure."""
    try:
        directory.mkdir(mode=0o755)
    except OSError:
        return
    groups._directories.append((directory, hierarchy.v2))
    wrote_limit = False
    if "memory" in hierarchy.controllers and _limit_memory(directory, hierarchy.v2, limits):
        groups._memory = (directory, hierarchy.v2)
        groups.applied.append("memory_cgroup")
        wrote_limit = True
    if "pids" in hierarchy.controllers and _write(
        directory / "pids.max", str(limits.max_processes + BWRAP_PROCESSES)
    ):
        groups.applied.append("pids_cgroup")
        wrote_limit = True
    if wrote_limit:
        groups.procs_files.append(directory / "cgroup.procs")


def _limit_memory(directory: Path, v2: bool, limits: PythonExecLimits) -> bool:
    """Set the memory limit with no swap beyond it; True if the limit itself was set."""
    budget = str(limits.memory_mb * MIB)
    if v2:
        if not _write(directory / "memory.max", budget):
            return False
        # Missing without swap accounting: memory.max holds all the same.
        _write(directory / "memory.swap.max", "0")
        _write(directory / "memory.oom.group", "1")  # one process over: the whole call goes
        return True
    if not _write(directory / "memory.limit_in_bytes", budget):
        return False
    _write(directory / "memory.memsw.limit_in_bytes", budget)  # memory + swap, if accounted
    return True


def _write(path: Path, value: str) -> bool:
    try:
        path.write_text(value)
    except OSError:
        return False
    return True


async def _empty_and_remove(directory: Path, v2: bool) -> None:
    """Kill whatever of the call is left in the group, then remove it."""
    for _ in range(_REMOVE_ROUNDS):
        if v2:
            _write(directory / "cgroup.kill", "1")
        else:
            _kill_members(directory)
        try:
            directory.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:  # killed processes keep it busy until they are reaped
            await asyncio.sleep(_REMOVE_PAUSE_S)


def _kill_members(directory: Path) -> None:
    with contextlib.suppress(OSError):
        for pid in (directory / "cgroup.procs").read_text().split():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(int(pid), signal.SIGKILL)


@functools.cache
def _hierarchies() -> tuple[_Hierarchy, ...]:
    """Writable hierarchies covering the controllers we use, v2 first."""
    try:
        mounts = [line.split() for line in Path("/proc/self/mounts").read_text().splitlines()]
        own = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return ()
    found: list[_Hierarchy] = []
    covered: set[str] = set()
    for fields in mounts:
        if len(fields) > 3 and fields[2] == "cgroup2":
            hierarchy = _v2_hierarchy(Path(_unescape(fields[1])))
            if hierarchy is not None:
                found.append(hierarchy)
                covered |= hierarchy.controllers
    for fields in mounts:
        if len(fields) > 3 and fields[2] == "cgroup":
            wanted = set(fields[3].split(",")) & set(_CONTROLLERS) - covered
            hierarchy = _v1_hierarchy(Path(_unescape(fields[1])), wanted, own)
            if hierarchy is not None:
                found.append(hierarchy)
                covered |= hierarchy.controllers
    for hierarchy in found:
        _remove_stale_groups(hierarchy.base)
    return tuple(found)


def _pid_namespace() -> int:
    """Names carry the PID namespace, so only pids we can see are checked for being alive."""
    try:
        return os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return 0


def _remove_stale_groups(base: Path) -> None:
    """Groups left by harness processes that died mid-call (their cleanup never ran)."""
    namespace = str(_pid_namespace())
    with contextlib.suppress(OSError):
        for entry in base.iterdir():
            match = re.fullmatch(r"call-(\d+)-(\d+)-\d+", entry.name)
            if match and match[1] == namespace and not Path(f"/proc/{match[2]}").exists():
                _kill_members(entry)
                with contextlib.suppress(OSError):
                    entry.rmdir()


def _v2_hierarchy(root: Path) -> _Hierarchy | None:
    """Our group at the top of a v2 tree: a group holding processes (like the harness's own)
    may not hand controllers to children, so per-call groups sit under a fresh one."""
    try:
        offered = set((root / "cgroup.controllers").read_text().split()) & set(_CONTROLLERS)
    except OSError:
        return None
    base = root / _GROUP
    enabled: set[str] = set()
    for controller in sorted(offered):
        if _write(root / "cgroup.subtree_control", f"+{controller}"):
            enabled.add(controller)
    with contextlib.suppress(OSError):
        base.mkdir(mode=0o755, exist_ok=True)
    enabled = {c for c in enabled if _write(base / "cgroup.subtree_control", f"+{c}")}
    return _Hierarchy(base, frozenset(enabled), v2=True) if enabled else None


def _v1_hierarchy(mount: Path, wanted: set[str], own: list[str]) -> _Hierarchy | None:
    """A group for our calls inside the harness's own group of a v1 hierarchy."""
    if not wanted:
        return None
    for line in own:
        _, controllers, path = line.split(":", 2)
        if wanted & set(controllers.split(",")):
            base = mount / path.lstrip("/") / _GROUP
            try:
                base.mkdir(mode=0o755, exist_ok=True)
            except OSError:
                return None
            return _Hierarchy(base, frozenset(wanted), v2=False)
    return None


def _unescape(field: str) -> str:
    """A path as /proc/*/mounts writes it, with octal escapes for blanks."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m[1], 8)), field)
