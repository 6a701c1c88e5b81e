"""Start one call in bwrap, watch its time and output, and leave nothing of it behind."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import signal
import time
from collections.abc import Iterator

from llm_eval.tools.python_exec.budget import MemoryBudget, shared_budget
from llm_eval.tools.python_exec.capture import OutputCapture, process_exited, wait_for_exit
from llm_eval.tools.python_exec.cgroups import CallCgroups, call_cgroups
from llm_eval.tools.python_exec.command import SandboxUnavailableError, bwrap_command
from llm_eval.tools.python_exec.host_user import SETUP_FAILED, HostUserError, child_setup
from llm_eval.tools.python_exec.limits import PythonExecLimits, rlimits
from llm_eval.tools.python_exec.result import PythonExecResult, exit_status, kill_text

# What every call gets from bwrap and the bootstrap; the cgroup steps are added when applied.
BASE_ISOLATION = (
    "bwrap", "allow_list", "no_network", "no_user_namespaces", "pid_namespace",
    "ipc_namespace", "private_tmp", "workdir_tmpfs", "read_only_root", "clean_env",
    "die_with_parent", "new_session", "rlimits", "unprivileged_host_uid",
    "own_session_keyring", "read_only_proc_sys",
)  # fmt: skip
# After the call ends or is killed, pipes close when the last holder dies; this bounds the
# wait in case something still holds them.
_READER_GRACE_S = 1.0


_DEFAULT_LIMITS = PythonExecLimits()


async def run_python(
    code: str, limits: PythonExecLimits = _DEFAULT_LIMITS, budget: MemoryBudget | None = None
) -> PythonExecResult:
    """Run `code` in a fresh bwrap sandbox and collect its output.

    The call first reserves its `memory_mb` in `budget` (by default the process's shared
    one) and may wait for room there. Never raises for anything the code does. Raises
    `SandboxUnavailableError` when bwrap is missing or cannot build the sandbox on this
    machine: the code is never run unsandboxed. Safe to run many calls concurrently.
    """
    async with (budget or shared_budget()).reserve(limits.memory_mb) as waited_s:
        result = await _run_sandboxed(code, limits)
    return dataclasses.replace(result, budget_wait_s=waited_s)


async def _run_sandboxed(code: str, limits: PythonExecLimits) -> PythonExecResult:
    started = time.monotonic()
    async with call_cgroups(limits) as groups:
        with _code_file(code) as code_fd, _info_pipe() as info:
            memory_cgroup = "memory_cgroup" in groups.applied
            command = bwrap_command(limits, rlimits(limits, memory_cgroup=memory_cgroup),
                                    code_fd, info.write_fd)  # fmt: skip
            proc = await _spawn(command, groups, (code_fd, info.write_fd))
            info.close_write_end()  # only bwrap writes; EOF once it is gone
            capture, kill = await _supervise(proc, limits)
            started_code = info.reported()
        # Read before the group is removed with its counters.
        if kill is None and groups.oom_killed():
            kill = "memory"
    return_code = proc.returncode if proc.returncode is not None else -signal.SIGKILL
    if not started_code and kill is None:
        raise SandboxUnavailableError(_failure_text(return_code, capture.stderr.text()))
    return PythonExecResult(
        stdout=capture.stdout.text(),
        stderr=capture.stderr.text(),
        exit_code=None if kill in ("timeout", "output") else exit_status(return_code),
        timed_out=kill == "timeout",
        truncated=capture.truncated,
        duration_s=time.monotonic() - started,
        isolation=(*BASE_ISOLATION, *groups.applied, "memory_budget"),
        kill_reason=kill_text(kill, limits),
    )


@contextlib.contextmanager
def _code_file(code: str) -> Iterator[int]:
    """The code in an anonymous memory file, which bwrap copies into the call's work dir."""
    fd = os.memfd_create("python_exec_code", os.MFD_CLOEXEC)
    try:
        os.write(fd, code.encode("utf-8", errors="surrogatepass"))
        os.lseek(fd, 0, os.SEEK_SET)
        yield fd
    finally:
        os.close(fd)


class _InfoPipe:
    """bwrap writes its sandbox's details here once the sandbox is built."""

    def __init__(self) -> None:
        self.read_fd, self.write_fd = os.pipe()
        self._write_open = True

    def close_write_end(self) -> None:
        # Exactly once: a second close could hit a descriptor another call now owns.
        if self._write_open:
            self._write_open = False
            os.close(self.write_fd)

    def reported(self) -> bool:
        """True once bwrap reported the sandbox built (it writes before the code runs)."""
        os.set_blocking(self.read_fd, False)
        try:
            return bool(os.read(self.read_fd, 1 << 16))
        except OSError:
            return False

    def close(self) -> None:
        self.close_write_end()
        os.close(self.read_fd)


@contextlib.contextmanager
def _info_pipe() -> Iterator[_InfoPipe]:
    info = _InfoPipe()
    try:
        yield info
    finally:
        info.close()


async def _spawn(
    command: list[str], groups: CallCgroups, fds: tuple[int, ...]
) -> asyncio.subprocess.Process:
    """Start bwrap as the call's host user, already in the call's cgroups (see `host_user`),
    so everything bwrap starts is counted from its first instruction on."""
    try:
        setup = child_setup([str(path) for path in groups.procs_files])
    except HostUserError as exc:
        raise SandboxUnavailableError(str(exc)) from exc
    try:
        return await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={},
            start_new_session=True,
            pass_fds=fds,
            preexec_fn=setup,
        )
    except OSError as exc:
        raise SandboxUnavailableError(f"python_exec cannot start bwrap: {exc}") from exc


async def _supervise(
    proc: asyncio.subprocess.Process, limits: PythonExecLimits
) -> tuple[OutputCapture, str | None]:
    """Drain output while waiting; kill on timeout or flood; always kill what is left."""
    capture = OutputCapture(limits.output_bytes)
    readers = [
        asyncio.create_task(capture.drain(proc.stdout, capture.stdout)),
        asyncio.create_task(capture.drain(proc.stderr, capture.stderr)),
    ]
    kill: str | None = None
    try:
        kill = await wait_for_exit(proc, capture.flooded, limits.timeout_s)
    finally:
        # Also on cancellation. bwrap's init dies with bwrap (--die-with-parent), and the
        # kernel then kills every process of the call's PID namespace.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        await process_exited(proc)
        await _finish_readers(readers)
    return capture, kill


async def _finish_readers(readers: list[asyncio.Task[None]]) -> None:
    """Let the readers reach EOF; give up if something still holds the pipes."""
    _, pending = await asyncio.wait(readers, timeout=_READER_GRACE_S)
    for task in pending:
        task.cancel()
    await asyncio.gather(*readers, return_exceptions=True)


def _failure_text(return_code: int, stderr: str) -> str:
    """One line on why the sandbox could not be built."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    if return_code == SETUP_FAILED and lines and lines[-1].startswith("python_exec: "):
        return f"python_exec cannot start a call as an unprivileged user: {lines[-1][13:]}"
    detail = lines[-1] if lines else f"bwrap exited with {return_code}"
    return f"python_exec cannot build its bwrap sandbox on this machine: {detail}"
