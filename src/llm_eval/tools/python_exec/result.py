"""What one `python_exec` call did, and how it reads to the model."""

from __future__ import annotations

import signal
from dataclasses import dataclass

from llm_eval.tools.python_exec.limits import PythonExecLimits

STDERR_TAIL_CHARS = 4000


@dataclass(frozen=True, slots=True)
class PythonExecResult:
    """What one `python_exec` call did, in a form that can be stored in a trace.

    `exit_code` is the code's exit status (negative: killed by that signal, e.g. SIGXCPU from
    the CPU limit) or None when the harness killed it (timeout, output flood). `kill_reason`
    says why the call was killed, also when the memory limit did it. `stderr` keeps the tail
    (where tracebacks end), `stdout` the head.
    """

    stdout: str
    stderr: str
    exit_code: int | None
    timed_out: bool
    truncated: bool
    duration_s: float
    isolation: tuple[str, ...]
    kill_reason: str | None = None
    budget_wait_s: float = 0.0  # waiting for room in the sandboxes' memory budget

    def to_tool_content(self) -> str:
        """Compact text handed back to the model as the tool result."""
        parts: list[str] = []
        if self.stdout:
            parts.append(self.stdout.rstrip("\n"))
        if self.stderr:
            parts.append("[stderr]\n" + _tail(self.stderr, STDERR_TAIL_CHARS).rstrip("\n"))
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


def kill_text(kill: str | None, limits: PythonExecLimits) -> str | None:
    """Human wording of why the call was killed ("timeout", "output", "memory")."""
    if kill == "timeout":
        return f"timed out after {limits.timeout_s:g} s"
    if kill == "output":
        return "output limit exceeded"
    if kill == "memory":
        return f"memory limit: the call's processes together used more than {limits.memory_mb} MB"
    return None


def exit_status(bwrap_code: int) -> int:
    """The code's own exit status from bwrap's: bwrap reports death by signal N as 128 + N."""
    signum = bwrap_code - 128
    if 0 < signum < signal.NSIG:
        return -signum
    return bwrap_code


def _tail(text: str, chars: int) -> str:
    """The last `chars` characters, marked when something was cut."""
    return text if len(text) <= chars else "..." + text[-chars:]


def _signal_note(signum: int) -> str:
    """Why a signal most likely ended the code."""
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
