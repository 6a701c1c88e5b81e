"""Enough file descriptors for the tasks a run keeps in flight.

Every call in flight holds a socket, and a tool call's sandbox a few pipes; the trace, the
response cache and Python's own imports need more. Linux starts processes with a soft limit of
1,024 open files (`ulimit -n`) under a far higher hard limit, so a run of 1,000 tasks in flight
would fail mid-way with "Too many open files". The run raises its own soft limit as far as it
needs, within the hard limit, and refuses up front a `global_limit` the hard limit cannot carry.
"""

from __future__ import annotations

import resource

from llm_eval.errors import UsageError

PER_TASK = 2
"""Descriptors one task in flight may hold: its connection, and room for a sandbox's pipes."""
BASE = 256
"""Descriptors the process needs besides its tasks (trace, cache, imports, stdio)."""


def wanted_open_files(global_limit: int) -> int:
    """Descriptors a run of `global_limit` tasks in flight asks for."""
    return BASE + PER_TASK * global_limit


def ensure_open_files(global_limit: int) -> int:
    """Raise the soft limit on open files to what `global_limit` needs; return the limit.

    A `UsageError` naming the setting when the hard limit cannot hold one connection per task.
    """
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = wanted_open_files(global_limit)
    if soft == resource.RLIM_INFINITY or soft >= wanted:
        return soft
    ceiling = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if ceiling < BASE // 4 + global_limit:
        raise UsageError(
            f"runner.global_limit: {global_limit} tasks in flight need about {wanted} open "
            f"files, and this process may open at most {hard} (`ulimit -Hn`); lower "
            "runner.global_limit or raise the hard limit"
        )
    resource.setrlimit(resource.RLIMIT_NOFILE, (ceiling, hard))
    return ceiling
