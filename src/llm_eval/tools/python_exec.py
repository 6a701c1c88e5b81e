"""The `python_exec` tool: run model-written Python in a contained child process.

This is trusted-local infrastructure, not a hardened sandbox. It stops the accidents a model
makes (endless loops, fork bombs, memory bombs, floods of output, stray writes, reading the
harness's API keys or the benchmark's answers, network calls, leftovers that outlive the
call) from hurting the evaluation run. It does not stop a determined attacker: the child
shares the kernel and can read world-readable files outside the masked directories.

How one call runs (each step is recorded in `PythonExecResult.isolation` only if it applied):

* the current interpreter (`sys.executable`) in isolated mode (`-I`: no `PYTHON*` variables,
  no user site, no script directory on `sys.path`), `-B` (no bytecode written), UTF-8 mode;
* a fresh temporary directory as working directory and `HOME`, removed afterwards;
* stdin closed, a new session and process group, an environment built from an empty dict;
* a wall-clock timeout, after which the process group and every process of the sandbox user
  are killed; leftovers are killed on a normal exit too;
* stdout and stderr read incrementally; only `output_bytes` of each are kept and a flood of
  output is killed once it passes a ceiling, so a 100 MB print cannot exhaust the parent;
* as root, where cgroup v2 offers the memory controller: a cgroup per call whose
  `memory.max` is `memory_mb` for all its processes together.

Inside the child, before the model's code runs, a small bootstrap (the `_child_*` functions of
this module, loaded by file path so the package need not be importable) applies what the
machine allows. The bootstrap process asks for SIGKILL when the harness dies and, if it can,
starts a new PID namespace whose init (a fork of the bootstrap, staying root) runs the model's
code in one more fork, reaps orphans and, when no cgroup limits the call, sums the
proportional memory of the namespace's processes and kills them all past `memory_mb`. The
init dies with the bootstrap and takes every process of the namespace with it, so nothing
survives a harness that is killed. Then:

* as root: a new network namespace (loopback down, so every connection fails); a new mount
  namespace in which every existing mount is read-only, `/tmp`, `/var/tmp`, `/dev/shm` and
  the working directory are private size-capped tmpfs (the code file is copied in and its
  host copy removed), `/run` (with `/run/lock`, `/run/user`, `/var/lock`) and `/dev/mqueue`
  are empty read-only tmpfs, the project (the harness's working directory, the checkout
  holding this package, and `masked_dirs`) and directories the sandbox user could not
  traverse anyway (e.g. `/root`) are empty read-only tmpfs with the interpreter's own
  directories bound back in, and `/proc` shows only the call's processes; then a drop to a
  per-call unprivileged uid/gid. Root ignores `RLIMIT_NPROC`, so the uid drop is what
  contains a fork bomb; a uid per concurrent call makes the process count per call and lets
  cleanup kill "every process of this uid" atomically;
* not root: a user + network namespace if unprivileged user namespaces are enabled;
* either way, if the kernel allows: a SysV IPC namespace, so segments, queues and semaphores
  vanish with the call; as root, in it a segment is also removed once nothing has it
  attached (so its memory is always some process's) and at most 16 message queues exist;
* always: rlimits on CPU seconds, address space, processes, file size, open files, no core
  files, and `PR_SET_NO_NEW_PRIVS` so setuid binaries cannot regain privileges.
"""

from __future__ import annotations

import builtins
import contextlib
import ctypes
import fcntl
import functools
import itertools
import json
import os
import re
import resource
import select
import shutil
import signal
import stat
import sys
import tempfile
import time
import traceback
import types
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

_CHILD_MODULE = "_llm_eval_python_exec_child"
if __name__ != _CHILD_MODULE:
    # Only the parent side needs asyncio, and importing it is most of the child's start-up
    # time (about 55 ms of 60), so the bootstrap copy of this module skips it. Annotations
    # are strings (see the __future__ import), so nothing else evaluates the name there.
    import asyncio

# --------------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PythonExecLimits:
    """Resource budget for one `python_exec` call."""

    timeout_s: float = 10.0
    cpu_seconds: int = 10
    memory_mb: int = 1024
    max_processes: int = 64
    file_size_mb: int = 16
    open_files: int = 64
    output_bytes: int = 65536
    # Size of each private tmpfs (working directory, /tmp, /var/tmp, /dev/shm); None means
    # max(16, 4 * file_size_mb). Their pages are RAM, so this also bounds what files can pin.
    tmpfs_mb: int | None = None
    # Hidden from the call besides the harness's working directory and the checkout.
    masked_dirs: tuple[str, ...] = ()

    @property
    def scratch_mb(self) -> int:
        """The effective size of each private tmpfs."""
        return self.tmpfs_mb if self.tmpfs_mb is not None else max(16, 4 * self.file_size_mb)


@dataclass(frozen=True, slots=True)
class PythonExecResult:
    """What one `python_exec` call did, in a form that can be stored in a trace.

    `exit_code` is the child's return code (negative: killed by that signal, e.g. SIGXCPU from
    the CPU limit) or None when the harness killed it (timeout, output flood) or it never
    started. `kill_reason` says why the call was killed, also when the per-call memory limit
    did it (then `exit_code` is -9). `stderr` keeps the tail (where tracebacks end), `stdout`
    the head.
    """

    stdout: str
    stderr: str
    exit_code: int | None
    timed_out: bool
    truncated: bool
    duration_s: float
    isolation: tuple[str, ...]
    kill_reason: str | None = None

    def to_tool_content(self) -> str:
        """Compact text handed back to the model as the tool result."""
        parts: list[str] = []
        if self.stdout:
            parts.append(self.stdout.rstrip("\n"))
        if self.stderr:
            parts.append("[stderr]\n" + _tail(self.stderr, _STDERR_TAIL_CHARS).rstrip("\n"))
        parts.extend(self._notes())
        return "\n".join(parts) if parts else "[no output]"

    def _notes(self) -> list[str]:
        """Bracketed notes on anything the model should know besides the output."""
        notes: list[str] = []
        if self.kill_reason is not None:
            notes.append(f"[killed: {self.kill_reason}]")
        elif self.exit_code is not None and self.exit_code < 0:
            notes.append(f"[killed: {_signal_note(-self.exit_code)}]")
        elif self.exit_code:
            notes.append(f"[exit code {self.exit_code}]")
        if "MemoryError" in self.stderr:
            notes.append("[memory limit reached (MemoryError)]")
        if self.truncated:
            notes.append("[output truncated]")
        return notes


async def run_python(
    code: str,
    limits: PythonExecLimits = PythonExecLimits(),
) -> PythonExecResult:
    """Run `code` in a contained child interpreter and collect its output.

    Never raises for anything the code does; a failure to start the child is reported as a
    result with `exit_code=None`. Safe to run many calls concurrently: each gets its own
    directory and (as root) its own uid.
    """
    started = time.monotonic()
    async with _sandbox_identity() as identity, _call_cgroup(identity, limits) as cgroup:
        workdir = _make_workdir(identity)
        try:
            return await _run_in_workdir(code, limits, workdir, identity, cgroup, started)
        finally:
            # After the sweep nothing of the sandbox is left that could still write here.
            await asyncio.to_thread(shutil.rmtree, workdir, True)


# --------------------------------------------------------------------------------------------
# Constants
# --------------------------------------------------------------------------------------------

_STDERR_TAIL_CHARS = 4000
# A flood of output is drained up to this many times `output_bytes` (at least 1 MiB) so a
# program that prints a lot and then finishes still reports its exit; past it we kill.
_DRAIN_FACTOR = 16
_MIN_DRAIN_CEILING = 1 << 20
_READ_CHUNK = 1 << 16
# After the main process ends or is killed, pipes close when the last holder dies; this bounds
# the wait when something we could not kill (non-root fallback) still holds them.
_READER_GRACE_S = 1.0
_SWEEP_ROUNDS = 20
_SWEEP_PAUSE_S = 0.02
_POLL_S = 0.01

# Per-call sandbox uids: far above any real or systemd dynamic account (61184-65519) and the
# usual subuid ranges. gid = uid, so no group on the system grants the sandbox anything.
_UID_BASE = 2_000_000_000
_UID_SLOTS = 4096
_SLOT_COUNTER = itertools.count()
_WORKDIR_PREFIX = "llm_eval_pyexec_"
_MIB = 1024 * 1024

# Masking one of these (or an ancestor) would hide the operating system from the child.
_SYSTEM_DIRS = (
    "/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/run",
    "/sbin", "/sys", "/tmp", "/usr", "/var", "/var/tmp",
)  # fmt: skip
_CGROUP_GROUP = "llm_eval_python_exec"
_CGROUP_REMOVE_ROUNDS = 50

# The only variables the child sees; everything else (API keys, tokens, .env values) is absent
# because the environment starts empty.
_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")

# Loads this file by path in the child (the package itself may not be importable there) and
# hands over to the bootstrap. The module is registered in sys.modules because dataclasses
# looks itself up there.
_LOADER = (
    "import importlib.util, sys\n"
    f"spec = importlib.util.spec_from_file_location({_CHILD_MODULE!r}, sys.argv[1])\n"
    "module = importlib.util.module_from_spec(spec)\n"
    "sys.modules[spec.name] = module\n"
    "spec.loader.exec_module(module)\n"
    "module._child_main(sys.argv[2])\n"
)

# Kills every process of the sandbox uid in one kernel call: kill(-1) as that uid signals all
# processes it may signal, under the task-list lock, so a fork bomb cannot outrun it. Started
# as root (the interpreter may live under /root) and drops to the uid itself.
_KILLER = (
    "import os, signal, sys\n"
    "uid = int(sys.argv[1])\n"
    "os.setgroups([]); os.setresgid(uid, uid, uid); os.setresuid(uid, uid, uid)\n"
    "try:\n"
    "    os.kill(-1, signal.SIGKILL)\n"
    "except ProcessLookupError:\n"
    "    pass\n"
)


# --------------------------------------------------------------------------------------------
# Parent side
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Identity:
    """The uid/gid one call runs as, held exclusively through a lock file."""

    uid: int
    gid: int
    lock_fd: int


@contextlib.asynccontextmanager
async def _sandbox_identity() -> AsyncIterator[_Identity | None]:
    """Claim a free sandbox uid (root only) and release it when the call is done."""
    identity = _claim_identity()
    try:
        if identity is not None:
            # A crashed earlier run may have left processes under this uid.
            await _kill_uid_processes(identity)
        yield identity
    finally:
        if identity is not None:
            os.close(identity.lock_fd)


def _claim_identity() -> _Identity | None:
    """Lock one uid slot; flock works across threads, tasks and harness processes alike."""
    if os.geteuid() != 0:
        return None
    lock_dir = _lock_dir()
    # Rotate through the slots instead of reusing the lowest free one: the processes of a
    # just-killed call can take a moment to be reaped, and they still count against the
    # uid's RLIMIT_NPROC. The pid term spreads concurrent harness processes apart.
    start = (os.getpid() * 7919 + next(_SLOT_COUNTER)) % _UID_SLOTS
    for offset in range(_UID_SLOTS):
        slot = (start + offset) % _UID_SLOTS
        fd = os.open(lock_dir / str(slot), os.O_CREAT | os.O_RDWR | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        uid = _UID_BASE + slot
        return _Identity(uid=uid, gid=uid, lock_fd=fd)
    return None


def _lock_dir() -> Path:
    """Root-only directory for the uid lock files (/run when present: root-owned, tmpfs)."""
    base = Path("/run") if os.access("/run", os.W_OK) else Path(tempfile.gettempdir())
    lock_dir = base / "llm_eval_python_exec_uids"
    lock_dir.mkdir(mode=0o700, exist_ok=True)
    info = os.lstat(lock_dir)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != 0:
        raise RuntimeError(f"{lock_dir} is not a root-owned directory")
    return lock_dir


def _make_workdir(identity: _Identity | None) -> Path:
    """A fresh private directory, owned by the sandbox uid so the code can write there."""
    workdir = Path(tempfile.mkdtemp(prefix=_WORKDIR_PREFIX)).resolve()
    if identity is not None:
        os.chown(workdir, identity.uid, identity.gid)
    workdir.chmod(0o700)
    return workdir


def _child_env(workdir: Path) -> dict[str, str]:
    """The child's whole environment: an allow-list, never a copy of ours."""
    env = {
        "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(workdir),
        "TMPDIR": str(workdir),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        # -I makes the interpreter ignore PYTHON* variables; this one still reaches any
        # Python the code starts without -I.
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    # Each BLAS thread counts against RLIMIT_NPROC and reserves address space, so default to
    # one thread unless the operator chose otherwise.
    for name in _THREAD_VARS:
        env[name] = os.environ.get(name, "1")
    for name, value in os.environ.items():
        if name.startswith("OPENBLAS_"):
            env[name] = value
    from llm_eval.redaction import is_secret_name  # parent side only: the child copy is bare

    return {name: value for name, value in env.items() if not is_secret_name(name)}


def _rlimits(limits: PythonExecLimits) -> list[tuple[str, int, int]]:
    """(resource name, soft, hard) for the child. CPU hard = soft + 1 so SIGXCPU comes first."""
    return [
        ("RLIMIT_CORE", 0, 0),
        ("RLIMIT_CPU", limits.cpu_seconds, limits.cpu_seconds + 1),
        ("RLIMIT_AS", limits.memory_mb * _MIB, limits.memory_mb * _MIB),
        ("RLIMIT_NPROC", limits.max_processes, limits.max_processes),
        ("RLIMIT_FSIZE", limits.file_size_mb * _MIB, limits.file_size_mb * _MIB),
        ("RLIMIT_NOFILE", limits.open_files, limits.open_files),
    ]


def _interpreter_trees() -> set[str]:
    """Directories the interpreter needs: its prefixes and the directory of its binary."""
    trees = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    trees.add(os.path.dirname(os.path.realpath(sys.executable)))
    return {os.path.realpath(p) for p in trees if os.path.isdir(p)}


def _checkout_root() -> str | None:
    """The project checkout this package runs from, if it runs from one."""
    for parent in Path(__file__).resolve().parents:
        if (parent / "pyproject.toml").is_file():
            return str(parent)
    return None


def _masked_dirs(limits: PythonExecLimits) -> list[str]:
    """The project directories to hide: where the answers, configs and `.env` files live.

    A directory is left out if hiding it would hide the operating system or the interpreter
    (the harness may run from `/` or from inside the interpreter's prefix).
    """
    trees = _interpreter_trees()
    masked: set[str] = set()
    try:
        cwd: str | None = os.getcwd()
    except OSError:  # the harness's working directory was deleted: nothing left to hide
        cwd = None
    for candidate in (cwd, _checkout_root(), *limits.masked_dirs):
        if candidate is None or not os.path.isdir(candidate):
            continue
        real = os.path.realpath(candidate)
        if any(real == d or _is_under(d, real) for d in ("/", *_SYSTEM_DIRS)):
            continue
        if any(real == t or _is_under(real, t) for t in trees):
            continue
        masked.add(real)
    return sorted(masked)


def _child_config(
    limits: PythonExecLimits,
    workdir: Path,
    identity: _Identity | None,
    cgroup: Path | None,
    status_fd: int,
) -> str:
    """The JSON handed to the bootstrap as argv."""
    return json.dumps(
        {
            "workdir": str(workdir),
            "code_path": str(workdir / "main.py"),
            "uid": identity.uid if identity else None,
            "gid": identity.gid if identity else None,
            "rlimits": _rlimits(limits),
            "status_fd": status_fd,
            "tmpfs_mb": limits.scratch_mb,
            "parent_pid": os.getpid(),
            "masked": _masked_dirs(limits),
            "cgroup": str(cgroup) if cgroup else None,
            "memory_bytes": limits.memory_mb * _MIB,
        }
    )


@functools.cache
def _cgroup_base() -> Path | None:
    """A cgroup v2 directory with the memory controller for per-call children, if any.

    It sits at the top of the hierarchy: a cgroup holding processes (like the harness's own)
    may not hand controllers to children.
    """
    if os.geteuid() != 0:
        return None
    try:
        mounts = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return None
    for fields in map(str.split, mounts):
        if len(fields) < 3 or fields[2] != "cgroup2":
            continue
        root = Path(_unescape_mount_path(fields[1]))
        try:
            if "memory" not in (root / "cgroup.controllers").read_text().split():
                continue
            (root / "cgroup.subtree_control").write_text("+memory")
            base = root / _CGROUP_GROUP
            base.mkdir(mode=0o755, exist_ok=True)
            (base / "cgroup.subtree_control").write_text("+memory")
        except OSError:
            continue
        return base
    return None


@contextlib.asynccontextmanager
async def _call_cgroup(
    identity: _Identity | None, limits: PythonExecLimits
) -> AsyncIterator[Path | None]:
    """A cgroup limiting the memory of the call as a whole, removed afterwards (root only)."""
    base = _cgroup_base() if identity is not None else None
    if base is None or identity is None:
        yield None
        return
    path = base / f"uid{identity.uid}"
    # Left by a harness that died mid-call; its processes went with the uid sweep.
    await _remove_cgroup(path)
    try:
        path.mkdir(mode=0o755)
        (path / "memory.max").write_text(str(limits.memory_mb * _MIB))
    except OSError:
        await _remove_cgroup(path)
        yield None
        return
    # Without swap accounting or on older kernels these are missing: memory.max still holds.
    for name, value in (("memory.swap.max", "0"), ("memory.oom.group", "1")):
        with contextlib.suppress(OSError):
            (path / name).write_text(value)
    try:
        yield path
    finally:
        await _remove_cgroup(path)


async def _remove_cgroup(path: Path) -> None:
    """rmdir a call's cgroup; killed processes can keep it busy for a moment."""
    for _ in range(_CGROUP_REMOVE_ROUNDS):
        try:
            path.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            await asyncio.sleep(_SWEEP_PAUSE_S)


def _cgroup_oom_killed(cgroup: Path | None) -> bool:
    """True if the kernel killed a process of the call for exceeding its memory.max."""
    if cgroup is None:
        return False
    try:
        events = (cgroup / "memory.events").read_text().split()
    except OSError:
        return False
    counts = dict(zip(events[::2], events[1::2], strict=False))
    return int(counts.get("oom_kill", "0")) > 0


class _CappedBuffer:
    """Keeps at most `cap` bytes of a stream (its head or its tail) and counts the rest."""

    __slots__ = ("_cap", "_keep_tail", "_data", "seen")

    def __init__(self, cap: int, *, keep_tail: bool) -> None:
        self._cap = cap
        self._keep_tail = keep_tail
        self._data = bytearray()
        self.seen = 0

    def add(self, chunk: bytes) -> None:
        """Account for `chunk`, keeping only what fits."""
        self.seen += len(chunk)
        if self._keep_tail:
            self._data += chunk
            if len(self._data) > self._cap:
                del self._data[: len(self._data) - self._cap]
        elif len(self._data) < self._cap:
            self._data += chunk[: self._cap - len(self._data)]

    @property
    def truncated(self) -> bool:
        return self.seen > self._cap

    def text(self) -> str:
        return self._data.decode("utf-8", errors="replace")


async def _drain(
    stream: asyncio.StreamReader | None,
    sink: _CappedBuffer,
    over_ceiling: asyncio.Event,
    total_seen: list[_CappedBuffer],
    ceiling: int,
) -> None:
    """Read `stream` to EOF into `sink`; flag a flood so the caller can kill the child.

    Reading never stops early: a child blocked on a full pipe would otherwise hang until the
    timeout instead of finishing or being killed.
    """
    if stream is None:
        return
    while chunk := await stream.read(_READ_CHUNK):
        sink.add(chunk)
        if sum(buf.seen for buf in total_seen) > ceiling:
            over_ceiling.set()


async def _wait_for_exit(
    proc: asyncio.subprocess.Process, over_ceiling: asyncio.Event, timeout_s: float
) -> str | None:
    """Wait for the child; return why we must kill it ("timeout", "output") or None."""
    exited = asyncio.ensure_future(_exited(proc))
    flooded = asyncio.ensure_future(over_ceiling.wait())
    try:
        await asyncio.wait(
            {exited, flooded}, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED
        )
    finally:
        flooded.cancel()
        exited.cancel()
    if exited.done() and not exited.cancelled():
        return None
    return "output" if over_ceiling.is_set() else "timeout"


async def _exited(proc: asyncio.subprocess.Process) -> None:
    """Return once the child process itself has ended.

    Not `proc.wait()`: asyncio's wait also waits for the pipes to close, which a surviving
    grandchild can delay until the timeout. A pidfd becomes readable the moment the process
    ends; without pidfd support, poll the return code.
    """
    try:
        pidfd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        pidfd = None
    if pidfd is not None:
        try:
            await _readable(pidfd)
        finally:
            os.close(pidfd)
    # The event loop's child watcher reaps the process and sets returncode shortly after.
    while proc.returncode is None:
        await asyncio.sleep(_POLL_S)


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


async def _readable(fd: int) -> None:
    """Wait until `fd` is readable, without a thread."""
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()
    loop.add_reader(fd, _resolve, ready)
    try:
        await ready
    finally:
        loop.remove_reader(fd)


def _kill_group(pgid: int) -> None:
    """SIGKILL the child's process group (start_new_session made the child its leader)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _live_pids_of(uid: int) -> list[int]:
    """Non-zombie processes with `uid` as real, effective or saved uid.

    Read from /proc/PID/status rather than the owner of /proc/PID, which is root whenever the
    process is not dumpable (the code can make itself so).
    """
    pids: list[int] = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and _proc_matches(entry.path, uid):
            pids.append(int(entry.name))
    return pids


def _proc_matches(proc_dir: str, uid: int) -> bool:
    """True if the process at `proc_dir` is alive (not a zombie) and runs as `uid`."""
    try:
        with open(f"{proc_dir}/status", "rb") as handle:
            status = handle.read()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return False
    state = _status_field(status, b"State:")
    uids = _status_field(status, b"Uid:")[:3]
    return bool(state) and state[0] not in (b"Z", b"X") and str(uid).encode() in uids


def _status_field(status: bytes, name: bytes) -> list[bytes]:
    """The words of one /proc/PID/status line (never the first line: that is `Name:`).

    Called for every process on each sweep, so it looks up two lines instead of parsing all.
    """
    start = status.find(b"\n" + name)
    if start < 0:
        return []
    end = status.find(b"\n", start + 1)
    return status[start + 1 + len(name) : end if end >= 0 else len(status)].split()


async def _kill_uid_processes(identity: _Identity) -> None:
    """Kill every process of the sandbox uid, including ones that left the process group."""
    for _ in range(_SWEEP_ROUNDS):
        if not _live_pids_of(identity.uid):
            return
        killer = await asyncio.create_subprocess_exec(
            sys.executable, "-I", "-S", "-c", _KILLER, str(identity.uid),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        await killer.wait()
        await asyncio.sleep(_SWEEP_PAUSE_S)


async def _finish_readers(
    proc: asyncio.subprocess.Process, readers: list[asyncio.Task[None]]
) -> None:
    """Let the readers reach EOF; give up if something unkillable still holds the pipes."""
    _, pending = await asyncio.wait(readers, timeout=_READER_GRACE_S)
    for task in pending:
        task.cancel()
    await asyncio.gather(*readers, return_exceptions=True)
    if pending:
        # Only reachable without a sandbox uid: a grandchild that left our process group
        # keeps the pipes open. Close our ends now rather than when the loop is gone.
        transport = getattr(proc, "_transport", None)
        if transport is not None:
            transport.close()


def _read_status(status_fd: int) -> tuple[tuple[str, ...], str | None]:
    """The isolation steps the bootstrap reported, and why its init killed the call if it did.

    The bootstrap writes one JSON line with the steps just before the model's code starts
    (nothing if it died before), the namespace's init possibly one `{"kill": ...}` line later.
    """
    os.set_blocking(status_fd, False)
    data = b""
    with contextlib.suppress(OSError):
        while chunk := os.read(status_fd, 1 << 16):
            data += chunk
    steps: tuple[str, ...] = ()
    kill: str | None = None
    for line in data.splitlines():
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if isinstance(message, list):
            steps = tuple(str(step) for step in message)
        elif isinstance(message, dict) and isinstance(message.get("kill"), str):
            kill = message["kill"]
    return steps, kill


async def _spawn(
    code: str,
    limits: PythonExecLimits,
    workdir: Path,
    identity: _Identity | None,
    cgroup: Path | None,
    status_w: int,
) -> asyncio.subprocess.Process:
    """Write the code file and start the bootstrap interpreter."""
    code_path = workdir / "main.py"
    code_path.write_text(code, encoding="utf-8")
    if identity is not None:
        os.chown(code_path, identity.uid, identity.gid)
    return await asyncio.create_subprocess_exec(
        sys.executable, "-I", "-B", "-X", "utf8", "-c", _LOADER, __file__,
        _child_config(limits, workdir, identity, cgroup, status_w),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=workdir,
        env=_child_env(workdir),
        start_new_session=True,
        pass_fds=(status_w,),
    )  # fmt: skip


async def _run_in_workdir(
    code: str,
    limits: PythonExecLimits,
    workdir: Path,
    identity: _Identity | None,
    cgroup: Path | None,
    started: float,
) -> PythonExecResult:
    """Spawn, supervise and clean up one child; always returns a result."""
    parent_steps = ("isolated_mode", "tempdir", "new_session", "clean_env")
    status_r, status_w = os.pipe()
    try:
        try:
            proc = await _spawn(code, limits, workdir, identity, cgroup, status_w)
        except OSError as exc:
            return PythonExecResult(
                stdout="", stderr=f"could not start python: {exc}", exit_code=None,
                timed_out=False, truncated=False, duration_s=time.monotonic() - started,
                isolation=parent_steps,
            )  # fmt: skip
        finally:
            os.close(status_w)
        outcome = await _supervise(proc, limits, identity)
        stdout, stderr, kill = outcome
        steps, child_kill = _read_status(status_r)
        if kill is None and (child_kill == "memory" or _cgroup_oom_killed(cgroup)):
            child_kill = "memory"
        return PythonExecResult(
            stdout=stdout.text(),
            stderr=stderr.text(),
            exit_code=None if kill else proc.returncode,
            timed_out=kill == "timeout",
            truncated=stdout.truncated or stderr.truncated,
            duration_s=time.monotonic() - started,
            isolation=parent_steps + steps,
            kill_reason=_kill_text(kill or child_kill, limits),
        )
    finally:
        os.close(status_r)


async def _supervise(
    proc: asyncio.subprocess.Process, limits: PythonExecLimits, identity: _Identity | None
) -> tuple[_CappedBuffer, _CappedBuffer, str | None]:
    """Drain output while waiting; kill on timeout or flood; always sweep leftovers."""
    stdout = _CappedBuffer(limits.output_bytes, keep_tail=False)
    stderr = _CappedBuffer(limits.output_bytes, keep_tail=True)
    flood = asyncio.Event()
    ceiling = max(_MIN_DRAIN_CEILING, _DRAIN_FACTOR * limits.output_bytes)
    readers = [
        asyncio.create_task(_drain(proc.stdout, stdout, flood, [stdout, stderr], ceiling)),
        asyncio.create_task(_drain(proc.stderr, stderr, flood, [stdout, stderr], ceiling)),
    ]
    kill: str | None = None
    try:
        kill = await _wait_for_exit(proc, flood, limits.timeout_s)
    finally:
        # Also on cancellation: nothing of the child may outlive this call.
        _kill_group(proc.pid)
        if identity is not None:
            await _kill_uid_processes(identity)
        await _exited(proc)
        await _finish_readers(proc, readers)
    return stdout, stderr, kill


def _kill_text(kill: str | None, limits: PythonExecLimits) -> str | None:
    """Human wording of why the harness killed the child."""
    if kill == "timeout":
        return f"timed out after {limits.timeout_s:g} s"
    if kill == "output":
        return "output limit exceeded"
    if kill == "memory":
        return f"memory limit: the call's processes together used more than {limits.memory_mb} MB"
    return None


def _tail(text: str, chars: int) -> str:
    """The last `chars` characters, marked when something was cut."""
    return text if len(text) <= chars else "..." + text[-chars:]


def _signal_note(signum: int) -> str:
    """Why a signal most likely ended the child."""
    if signum == signal.SIGXCPU:
        return "CPU time limit"
    if signum == signal.SIGXFSZ:
        return "file size limit"
    if signum == signal.SIGKILL:
        return "SIGKILL (memory or process limit, or killed externally)"
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


# --------------------------------------------------------------------------------------------
# Child side: runs inside the new interpreter, before the model's code
# --------------------------------------------------------------------------------------------

_CLONE_NEWNS = 0x00020000
_CLONE_NEWIPC = 0x08000000
_CLONE_NEWUSER = 0x10000000
_CLONE_NEWPID = 0x20000000
_CLONE_NEWNET = 0x40000000
_MS_RDONLY = 0x1
_MS_NOSUID = 0x2
_MS_NODEV = 0x4
_MS_NOEXEC = 0x8
_MS_REMOUNT = 0x20
_MS_BIND = 0x1000
_MS_REC = 0x4000
_MS_PRIVATE = 0x40000
_MNT_DETACH = 0x2
_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
_PR_SET_NO_NEW_PRIVS = 38
_TMP_DIRS = ("/tmp", "/var/tmp", "/dev/shm")
# World-writable places besides the temp dirs: a file or socket left there would outlive the
# call or meet other processes. /run also holds the host daemons' sockets.
_SHARED_DIRS = ("/run", "/var/run", "/var/lock", "/dev/mqueue")
_MASK_OPTIONS = "size=1m,nr_inodes=1024,mode=755"
# Flags a read-only remount must repeat or lose; statvfs reports them with the MS_* values.
_KEPT_MOUNT_FLAGS = (
    os.ST_NOSUID | os.ST_NODEV | os.ST_NOEXEC | os.ST_NOATIME | os.ST_NODIRATIME | os.ST_RELATIME
)
_INIT_POLL_S = 0.05
_IPC_SYSCTLS = (
    # A segment goes as soon as no process has it attached, so its memory is always in some
    # process's Pss and within the per-call budget.
    ("shm_rmid_forced", "1"),
    # Queued messages are kernel memory no process maps: at most 16 queues of 16 KiB.
    ("msgmni", "16"),
)


@dataclass(frozen=True, slots=True)
class _ChildConfig:
    """What the parent tells the bootstrap (see `_child_config`)."""

    workdir: str
    code_path: str
    uid: int | None
    gid: int | None
    rlimits: list[tuple[str, int, int]]
    status_fd: int
    tmpfs_mb: int
    parent_pid: int
    masked: list[str]
    cgroup: str | None
    memory_bytes: int


def _child_main(config_json: str) -> None:
    """Entry point of the bootstrap: isolate, report what applied, run the model's code."""
    config = _ChildConfig(**json.loads(config_json))
    libc = ctypes.CDLL(None, use_errno=True)
    # The bootstrap may re-raise the code's fatal signal on itself; no core file for that.
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    applied = _child_bootstrap(libc, config)
    relay = _child_start_init(libc, config)
    if relay is not None:
        applied.append("pid_namespace")
    applied += _child_isolate(libc, config, in_pid_namespace=relay is not None)
    if relay is not None:
        watch_memory = "private_proc" in applied and "memory_cgroup" not in applied
        if watch_memory:
            applied.append("memory_per_call")
        _child_fork_worker(relay, config, watch_memory)
    applied += _child_restrict(libc, config, in_pid_namespace=relay is not None)
    os.write(config.status_fd, (json.dumps(applied) + "\n").encode())
    os.close(config.status_fd)
    _child_run_code(config.code_path)


def _child_bootstrap(libc: ctypes.CDLL, config: _ChildConfig) -> list[str]:
    """First steps: die with the harness, join the call's cgroup, a user namespace if not root."""
    applied: list[str] = []
    if _child_die_with(libc, config.parent_pid):
        applied.append("parent_death_signal")
    if config.cgroup is not None and _child_join_cgroup(config.cgroup):
        applied.append("memory_cgroup")
    if os.geteuid() != 0 and libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNET) == 0:
        applied.append("no_network")
    return applied


def _child_die_with(libc: ctypes.CDLL, parent_pid: int) -> bool:
    """Ask for SIGKILL when the parent dies; exit at once if it already has."""
    if libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) != 0:
        return False
    if os.getppid() != parent_pid:
        os._exit(1)
    return True


def _child_join_cgroup(cgroup: str) -> bool:
    """Move this process, and so everything it starts, into the call's cgroup."""
    try:
        Path(cgroup, "cgroup.procs").write_text(str(os.getpid()))
    except OSError:
        return False
    return True


def _child_start_init(libc: ctypes.CDLL, config: _ChildConfig) -> int | None:
    """Fork the init of a new PID namespace; return, in the init, the fd reporting back to us.

    This process stays outside: it waits for the init and then ends the way the model's code
    did, so the harness sees the code's own exit status. None: no namespace, carry on here.
    """
    if libc.unshare(_CLONE_NEWPID) != 0:
        return None
    relay_r, relay_w = os.pipe()
    try:
        init = os.fork()
    except OSError:
        os.close(relay_r)
        os.close(relay_w)
        return None
    if init == 0:
        os.close(relay_r)
        libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        # POLLERR on the write end: its reader, the bootstrap, died before the request above.
        poller = select.poll()
        poller.register(relay_w, 0)
        if poller.poll(0):
            os._exit(1)
        return relay_w
    try:
        os.close(relay_w)
        os.close(config.status_fd)
        _, status = os.waitpid(init, 0)
        reported = os.read(relay_r, 32)
        _child_exit_as(int(reported) if reported else status)
    finally:
        os._exit(1)


def _child_exit_as(status: int) -> NoReturn:
    """End this process with the same exit code or fatal signal as the wait `status`."""
    if os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        with contextlib.suppress(OSError, ValueError):
            signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        os._exit(128 + signum)
    os._exit(os.WEXITSTATUS(status))


def _child_fork_worker(relay: int, config: _ChildConfig, watch_memory: bool) -> None:
    """In the init: fork the process that runs the code, then reap and watch until it ends.

    Returns only in that new process. The init keeps root, so the code can neither signal,
    trace nor hide from it; once the init exits, the kernel kills the rest of the namespace.
    """
    worker = os.fork()
    if worker == 0:
        os.close(relay)
        return
    try:
        status = _child_watch(worker, config, watch_memory)
        os.write(relay, str(status).encode())
    finally:
        os._exit(0)


def _child_watch(worker: int, config: _ChildConfig, watch_memory: bool) -> int:
    """Reap orphans until `worker` ends; past the memory budget, kill the namespace first."""
    try:
        pidfd: int | None = os.pidfd_open(worker)
    except (AttributeError, OSError):
        pidfd = None
    while True:
        if pidfd is not None:
            select.select([pidfd], [], [], _INIT_POLL_S)
        else:
            time.sleep(_INIT_POLL_S)
        status = _child_reap(worker)
        if status is not None:
            return status
        if watch_memory and _child_namespace_memory() > config.memory_bytes:
            os.kill(-1, signal.SIGKILL)
            os.write(config.status_fd, b'{"kill": "memory"}\n')
            return os.waitpid(worker, 0)[1]


def _child_reap(worker: int) -> int | None:
    """Reap every ended child; the wait status of `worker` if it was among them."""
    status = None
    while True:
        try:
            pid, wait_status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return status
        if pid == 0:
            return status
        if pid == worker:
            status = wait_status


def _child_namespace_memory() -> int:
    """Proportional set size, in bytes, of the namespace's processes other than the init.

    Pss splits shared pages among their users, so forked copies of the interpreter are not
    counted twice; root reads it even for processes that made themselves non-dumpable.
    """
    total = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or entry.name == "1":
            continue
        try:
            with open(f"/proc/{entry.name}/smaps_rollup", "rb") as rollup:
                data = rollup.read()
        except OSError:
            continue
        if match := re.search(rb"^Pss:\s+(\d+) kB", data, re.MULTILINE):
            total += int(match[1]) * 1024
    return total


def _child_isolate(libc: ctypes.CDLL, config: _ChildConfig, *, in_pid_namespace: bool) -> list[str]:
    """Apply the namespaces and mounts this machine allows; return the names of those applied."""
    applied: list[str] = []
    # Opened before the mount namespace exists, so it keeps pointing at the host's directory.
    workdir_fd = os.open(config.workdir, os.O_RDONLY | os.O_DIRECTORY)
    try:
        if os.geteuid() == 0 and libc.unshare(_CLONE_NEWNET) == 0:
            applied.append("no_network")
        if libc.unshare(_CLONE_NEWIPC) == 0:
            applied.append("ipc_namespace")
        if os.geteuid() == 0:
            applied += _child_private_mounts(libc, config, workdir_fd, in_pid_namespace)
        if "ipc_namespace" in applied and _child_limit_ipc():
            applied.append("ipc_limits")
        try:
            os.chdir(config.workdir)  # by path: the workdir may now be a tmpfs over it
        except OSError:
            os.fchdir(workdir_fd)
    finally:
        os.close(workdir_fd)
    return applied


def _child_limit_ipc() -> bool:
    """Tighten the SysV IPC sysctls, which belong to the (new) IPC namespace of the writer."""
    try:
        for name, value in _IPC_SYSCTLS:
            Path("/proc/sys/kernel", name).write_text(value)
    except OSError:
        return False
    return True


def _child_private_mounts(
    libc: ctypes.CDLL, config: _ChildConfig, host_workdir: int, in_pid_namespace: bool
) -> list[str]:
    """A mount namespace where only the call's own tmpfs are writable and the project is gone."""
    if libc.unshare(_CLONE_NEWNS) != 0:
        return []
    # Without this, mounts made here would propagate back to the host's mount table.
    if _child_mount(libc, None, "/", None, _MS_REC | _MS_PRIVATE) != 0:
        return []
    applied: list[str] = []
    if _child_read_only_mounts(libc):
        applied.append("read_only_mounts")
    applied += _child_overlays(libc, config)
    if _child_workdir_tmpfs(libc, config, host_workdir):
        applied.append("workdir_tmpfs")
    proc_flags = _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
    if in_pid_namespace and _child_mount(libc, "proc", "/proc", "proc", proc_flags) == 0:
        applied.append("private_proc")
    return applied


def _child_read_only_mounts(libc: ctypes.CDLL) -> bool:
    """Make every mount of this namespace read-only (/proc is replaced later); True if all are.

    World-writable directories can sit anywhere (/run/lock, /var/crash, ...); with this, the
    only writable places are the tmpfs mounted afterwards, which vanish with the call.
    """
    ok = True
    seen: set[str] = set()
    with open("/proc/self/mountinfo", encoding="utf-8") as mountinfo:
        lines = mountinfo.read().splitlines()
    for line in lines:
        target = _unescape_mount_path(line.split()[4])
        if target in seen or target == "/proc" or _is_under(target, "/proc"):
            continue
        seen.add(target)
        try:
            flags = os.statvfs(target).f_flag
        except OSError:
            ok = False
            continue
        if flags & os.ST_RDONLY:
            continue
        remount = _MS_BIND | _MS_REMOUNT | _MS_RDONLY | (flags & _KEPT_MOUNT_FLAGS)
        if _child_mount(libc, None, target, None, remount) != 0:
            ok = False
    return ok


def _unescape_mount_path(field: str) -> str:
    """A path as /proc/*/mounts and mountinfo write it, with octal escapes for blanks."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m[1], 8)), field)


def _child_overlays(libc: ctypes.CDLL, config: _ChildConfig) -> list[str]:
    """Private writable tmpfs over the temp dirs, empty read-only tmpfs over the masked dirs.

    Masks cover the project directories, the shared world-writable directories and those the
    sandbox uid could not traverse anyway (it is neither owner nor group of anything, so
    "other" bits decide); the interpreter's own directories are bound back in.
    """
    keep = _child_keep_paths(config.workdir, config.masked)
    shared = {os.path.realpath(d) for d in _SHARED_DIRS if os.path.isdir(d)}
    groups = {
        "private_tmp": [d for d in _TMP_DIRS if os.path.isdir(d) and not os.path.islink(d)],
        "masked_private_dirs": sorted({b for p in keep if (b := _child_blocked_ancestor(p))}),
        "masked_shared_dirs": sorted(shared),
        "masked_project": config.masked,
    }
    scratch = f"size={config.tmpfs_mb}m,nr_inodes={config.tmpfs_mb * 1024},mode=1777"
    mounted: list[str] = []
    failed: set[str] = set()
    # Sorted, so an ancestor comes first and hides whatever would be masked below it.
    for target in sorted({t for targets in groups.values() for t in targets}):
        if any(_is_under(target, done) for done in mounted) or not os.path.isdir(target):
            continue
        private = target in groups["private_tmp"]
        options = scratch if private else _MASK_OPTIONS
        if _child_overlay(libc, target, keep, options, read_only=not private):
            mounted.append(target)
        else:
            failed.add(target)
    return [step for step, targets in groups.items() if targets and not failed & set(targets)]


def _child_keep_paths(workdir: str, masked: Iterable[str]) -> list[str]:
    """Directories that must stay reachable: the workdir and the interpreter's own trees.

    `sys.path` entries inside a masked directory (the project's own sources) stay hidden.
    """
    masked = list(masked)
    on_path = {os.path.realpath(p) for p in sys.path if p}
    on_path = {p for p in on_path if not any(p == m or _is_under(p, m) for m in masked)}
    candidates = {os.path.realpath(workdir)} | _interpreter_trees() | on_path
    real = {p for p in candidates if os.path.exists(p)}
    # Binding an ancestor (recursively) already brings its descendants along.
    return sorted(p for p in real if not any(_is_under(p, other) for other in real if other != p))


def _is_under(path: str, ancestor: str) -> bool:
    return path.startswith(ancestor.rstrip("/") + "/")


def _child_blocked_ancestor(path: str) -> str | None:
    """The topmost ancestor of `path` that others may not traverse, if any."""
    current = "/"
    for part in Path(path).parts[1:-1]:
        current = os.path.join(current, part)
        if not os.stat(current).st_mode & stat.S_IXOTH:
            return current
    return None


def _child_overlay(
    libc: ctypes.CDLL, target: str, keep: Iterable[str], options: str, *, read_only: bool
) -> bool:
    """Mount a fresh tmpfs on `target`, binding back the kept paths that lived under it."""
    inside = [p for p in keep if _is_under(p, target)]
    fds = {p: os.open(p, os.O_PATH) for p in inside}  # opened before they are hidden
    try:
        if _child_mount(libc, "tmpfs", target, "tmpfs", _MS_NOSUID | _MS_NODEV, options) != 0:
            return False
        for path, fd in fds.items():
            os.makedirs(path, mode=0o755, exist_ok=True)
            if _child_mount(libc, f"/proc/self/fd/{fd}", path, None, _MS_BIND | _MS_REC) != 0:
                libc.umount2(target.encode(), _MNT_DETACH)
                return False
        remount = _MS_BIND | _MS_REMOUNT | _MS_RDONLY | _MS_NOSUID | _MS_NODEV
        if read_only and _child_mount(libc, None, target, None, remount) != 0:
            libc.umount2(target.encode(), _MNT_DETACH)
            return False
        return True
    finally:
        for fd in fds.values():
            os.close(fd)


def _child_workdir_tmpfs(libc: ctypes.CDLL, config: _ChildConfig, host_workdir: int) -> bool:
    """Mount the call's own size-capped tmpfs on its working directory, with the code file.

    What the code writes there goes with the mount namespace, even when the harness is
    killed; the host directory is left empty (the code file is copied in, then removed).
    """
    uid = config.uid if config.uid is not None else 0
    gid = config.gid if config.gid is not None else 0
    name = os.path.basename(config.code_path)
    with open(os.open(name, os.O_RDONLY, dir_fd=host_workdir), "rb") as source:
        code = source.read()
    mb = config.tmpfs_mb
    options = f"size={mb}m,nr_inodes={mb * 1024},mode=700,uid={uid},gid={gid}"
    if _child_mount(libc, "tmpfs", config.workdir, "tmpfs", _MS_NOSUID | _MS_NODEV, options) != 0:
        return False
    try:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
        with open(os.open(config.code_path, flags, 0o600), "wb") as copy:
            copy.write(code)
        os.chown(config.code_path, uid, gid)
    except OSError:
        libc.umount2(config.workdir.encode(), _MNT_DETACH)
        return False
    os.unlink(name, dir_fd=host_workdir)
    return True


def _child_mount(
    libc: ctypes.CDLL,
    source: str | None,
    target: str,
    fstype: str | None,
    flags: int,
    data: str | None = None,
) -> int:
    """mount(2) through libc (Python has no binding); 0 on success."""

    def encode(value: str | None) -> bytes | None:
        return value.encode() if value is not None else None

    return int(
        libc.mount(
            encode(source), encode(target), encode(fstype), ctypes.c_ulong(flags), encode(data)
        )
    )


def _child_set_rlimits(rlimits: list[tuple[str, int, int]]) -> bool:
    """Set each limit, never above an existing hard limit; True if all were set."""
    ok = True
    for name, soft, hard in rlimits:
        which = getattr(resource, name, None)
        if which is None:
            ok = False
            continue
        _, current_hard = resource.getrlimit(which)
        if current_hard != resource.RLIM_INFINITY and os.geteuid() != 0:
            soft, hard = min(soft, current_hard), min(hard, current_hard)
        try:
            resource.setrlimit(which, (soft, hard))
        except (OSError, ValueError):
            ok = False
    return ok


def _child_restrict(
    libc: ctypes.CDLL, config: _ChildConfig, *, in_pid_namespace: bool
) -> list[str]:
    """Last steps before the code runs: rlimits, the uid drop, no new privileges."""
    applied: list[str] = []
    if _child_set_rlimits(config.rlimits):
        applied.append("rlimits")
    if config.uid is not None and config.gid is not None and _child_drop_uid(config):
        applied.append("unprivileged_uid")
        # Changing uid made the process non-dumpable, which leaves /proc/self owned by root
        # and unusable by the code; nothing privileged remains in it, so undo that.
        libc.prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0)
        if not in_pid_namespace:
            # The uid change also cleared the parent-death signal; a namespace's init needs
            # none, since the kernel kills the namespace when the init dies.
            _child_die_with(libc, config.parent_pid)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0:
        applied.append("no_new_privs")
    return applied


def _child_drop_uid(config: _ChildConfig) -> bool:
    """Become the sandbox uid/gid, unless the interpreter would then be unreachable."""
    assert config.uid is not None and config.gid is not None
    if any(_child_blocked_ancestor(p) for p in _child_keep_paths(config.workdir, config.masked)):
        return False  # every later import would fail; running as root is the lesser evil
    try:
        os.setgroups([])
        os.setresgid(config.gid, config.gid, config.gid)
        os.setresuid(config.uid, config.uid, config.uid)
    except OSError:
        return False
    return True


def _child_run_code(code_path: str) -> None:
    """Run the model's file as `__main__`, with tracebacks free of bootstrap frames."""
    # Line buffering, so output printed before a timeout kill still reaches the parent.
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(line_buffering=True)
    sys.argv = [code_path]
    sys.path.insert(0, os.path.dirname(code_path))  # as `python main.py` would
    main = types.ModuleType("__main__")
    main.__file__ = code_path
    main.__builtins__ = builtins  # type: ignore[attr-defined]
    sys.modules["__main__"] = main
    try:
        source = Path(code_path).read_text(encoding="utf-8")
        exec(compile(source, code_path, "exec"), main.__dict__)
    except SystemExit:
        raise
    except BaseException as exc:
        tb = exc.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != code_path:
            tb = tb.tb_next
        traceback.print_exception(type(exc), exc, tb)
        raise SystemExit(1) from None
