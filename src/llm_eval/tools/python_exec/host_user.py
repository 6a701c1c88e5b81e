"""Who a call is on the host: an unprivileged uid with a session keyring of its own.

bwrap maps the call's uid to whichever host uid starts it. Started by a root harness, the
call would be host root inside its namespaces, and host root may write `/proc/sys` (a
`core_pattern` runs as root at the next crash) and read root's keys. So the forked child,
before it becomes bwrap, joins the call's cgroups (which needs root), drops to uid and gid
65534 with no supplementary groups, and joins a new, empty session keyring: the harness's
keyring is inherited otherwise, and possessing a keyring grants its keys whatever the uid.

An unprivileged bwrap may bind only what its uid can reach. A tree it cannot (an interpreter
under `/root`, mode 0700) is first bound, in a mount namespace private to the child, onto an
empty directory the uid can reach; bwrap binds it from there under its own name.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import functools
import os
import platform
import stat
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass

SANDBOX_HOST_ID = 65534  # "nobody": owns nothing on any host
SETUP_FAILED = 125  # the child's exit status when it could not become the sandbox's user
_CLONE_NEWNS = 0x00020000
_MS_BIND, _MS_REC, _MS_PRIVATE = 0x1000, 0x4000, 0x40000
_KEYCTL_JOIN_SESSION_KEYRING = 1
# keyctl's syscall number: x86_64 has its own table, the newer ports share asm-generic's.
_KEYCTL_SYSCALL = {"x86_64": 250, "aarch64": 219, "arm64": 219, "riscv64": 219}
_ENOSYS = 38


class HostUserError(Exception):
    """This machine cannot give a call an unprivileged user; no call runs without one."""


def drops_privileges() -> bool:
    """A root harness drops to `SANDBOX_HOST_ID`; any other uid is unprivileged already."""
    return os.geteuid() == 0


@dataclass(frozen=True, slots=True)
class ChildSetup:
    """What the forked child does before it execs bwrap (a `preexec_fn`, run as the harness).

    Only small work that takes no lock another thread could have held at the fork: writes
    to files, and syscalls through libc functions looked up before the fork. A failure is
    written to stderr and ends the child with `SETUP_FAILED`: nothing then runs, and
    certainly not as root.
    """

    cgroup_procs: tuple[str, ...]
    staged: tuple[tuple[str, str], ...]
    drop: bool
    keyctl: int

    def __call__(self) -> None:
        step = "joining the call's cgroup"
        try:
            for procs in self.cgroup_procs:
                with open(procs, "w") as handle:
                    handle.write(str(os.getpid()))
            step = "binding what uid 65534 cannot reach"
            if self.staged:
                _bind_privately(self.staged)
            step = "dropping to uid 65534"
            if self.drop:
                os.setgroups([])
                os.setresgid(SANDBOX_HOST_ID, SANDBOX_HOST_ID, SANDBOX_HOST_ID)
                os.setresuid(SANDBOX_HOST_ID, SANDBOX_HOST_ID, SANDBOX_HOST_ID)
            step = "joining a new session keyring"
            _join_new_session_keyring(self.keyctl)
        except Exception as exc:  # any failure: the child must not go on to exec
            reason = getattr(exc, "strerror", None) or exc
            os.write(2, f"python_exec: {step} failed: {reason}\n".encode())
            os._exit(SETUP_FAILED)


def child_setup(cgroup_procs: Sequence[str]) -> ChildSetup:
    """The setup of one call's child; raises `HostUserError` where it cannot be done."""
    drop = drops_privileges()
    _look_up_libc_functions()
    return ChildSetup(
        cgroup_procs=tuple(cgroup_procs),
        staged=tuple(_STAGE.binds) if drop else (),
        drop=drop,
        keyctl=keyctl_syscall(),
    )


def keyctl_syscall() -> int:
    """keyctl's syscall number here; an unknown machine is refused rather than left open."""
    number = _KEYCTL_SYSCALL.get(platform.machine())
    if number is None:
        raise HostUserError(
            f"python_exec does not know keyctl's syscall number on {platform.machine()}, so it "
            "cannot give a call its own session keyring"
        )
    return number


def reachable_path(path: str) -> str:
    """`path`, or where the child finds it when uid 65534 cannot reach it (see module doc).

    A file is reached through its staged directory. Without a privilege drop, or when every
    parent directory lets others search it, the path itself.
    """
    if not drops_privileges() or _others_can_reach(path):
        return path
    if os.path.isdir(path):
        return _STAGE.directory_for(path)
    folder, name = os.path.split(path)
    if not os.stat(folder).st_mode & stat.S_IXOTH:
        # A bind shows the source's own mode: a folder others cannot search stays closed
        # however it is staged, so the file itself is bound onto an empty staged file.
        return _STAGE.file_for(path)
    return os.path.join(_STAGE.directory_for(folder), name)


def _others_can_reach(path: str) -> bool:
    """True if every directory above `path` lets others search it (the mode's o+x)."""
    folder = os.path.dirname(os.path.abspath(path))
    while True:
        try:
            if not os.stat(folder).st_mode & stat.S_IXOTH:
                return False
        except OSError:
            return False
        parent = os.path.dirname(folder)
        if parent == folder:
            return True
        folder = parent


class _Stage:
    """Empty, reachable directories (one per unreachable tree) under one per-process folder.

    They stay empty on the host: the binds onto them exist only in each child's own mount
    namespace. The folder is removed when the harness exits.
    """

    def __init__(self) -> None:
        self.binds: list[tuple[str, str]] = []
        self._root: str | None = None

    def directory_for(self, tree: str) -> str:
        """An empty directory onto which the child binds `tree`."""
        return self._staged(tree, is_file=False)

    def file_for(self, source: str) -> str:
        """An empty file onto which the child binds the file `source`."""
        return self._staged(source, is_file=True)

    def _staged(self, source: str, *, is_file: bool) -> str:
        for known, staged in self.binds:
            if known == source:
                return staged
        if self._root is None:
            _remove_stale_stages()
            prefix = f"{_STAGE_PREFIX}{_pid_namespace()}-{os.getpid()}-"
            self._root = tempfile.mkdtemp(prefix=prefix, dir=_STAGE_PARENT)
            os.chmod(self._root, 0o755)
            atexit.register(self._remove)
        staged = os.path.join(self._root, str(len(self.binds)))
        if is_file:
            os.close(os.open(staged, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o755))
        else:
            os.mkdir(staged, 0o755)
        os.chmod(staged, 0o755)  # whatever the umask
        self.binds.append((source, staged))
        return staged

    def _remove(self) -> None:
        if self._root is not None:
            _remove_empty_tree(self._root)


_STAGE = _Stage()
_STAGE_PARENT = "/tmp"
_STAGE_PREFIX = "llm_eval_sandbox_"


def _pid_namespace() -> int:
    """Names carry the PID namespace, so only pids we can see are checked for being alive."""
    try:
        return os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return 0


def _remove_stale_stages() -> None:
    """Stages of harness processes that died without their exit handlers (SIGKILL)."""
    namespace = str(_pid_namespace())
    with contextlib.suppress(OSError):
        for entry in os.scandir(_STAGE_PARENT):
            parts = entry.name.removeprefix(_STAGE_PREFIX).split("-")
            if (
                entry.name.startswith(_STAGE_PREFIX)
                and len(parts) == 3
                and parts[0] == namespace
                and parts[1].isdigit()
                and not os.path.exists(f"/proc/{parts[1]}")
            ):
                _remove_empty_tree(entry.path)


def _remove_empty_tree(root: str) -> None:
    """Remove the stage's empty directories and empty files, never anything with content."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(root):
            with contextlib.suppress(OSError):
                if entry.is_dir(follow_symlinks=False):
                    os.rmdir(entry.path)
                elif entry.is_file(follow_symlinks=False) and not entry.stat().st_size:
                    os.unlink(entry.path)
        os.rmdir(root)


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _look_up_libc_functions() -> None:
    """Look up the libc functions the child calls, so the child does no dynamic lookup."""
    libc = _libc()
    for name in ("unshare", "mount", "syscall"):
        getattr(libc, name)
    libc.syscall.restype = ctypes.c_long


def _bind_privately(staged: tuple[tuple[str, str], ...]) -> None:
    """In a mount namespace of the child's own (nothing propagates back), bind each tree."""
    libc = _libc()
    if libc.unshare(_CLONE_NEWNS) != 0:
        raise _errno_error("unshare(CLONE_NEWNS)")
    if libc.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None) != 0:
        raise _errno_error("making mounts private")
    for source, target in staged:
        if libc.mount(source.encode(), target.encode(), None, _MS_BIND | _MS_REC, None) != 0:
            raise _errno_error(f"binding {source}")


def _join_new_session_keyring(keyctl: int) -> None:
    """keyctl(KEYCTL_JOIN_SESSION_KEYRING, NULL): a new, empty, anonymous session keyring."""
    libc = _libc()
    result = libc.syscall(ctypes.c_long(keyctl), ctypes.c_long(_KEYCTL_JOIN_SESSION_KEYRING), None)
    if result < 0 and ctypes.get_errno() != _ENOSYS:  # no keyrings in this kernel: none to leak
        raise _errno_error("keyctl(KEYCTL_JOIN_SESSION_KEYRING)")


def _errno_error(what: str) -> OSError:
    errno = ctypes.get_errno()
    return OSError(errno, f"{what}: {os.strerror(errno)}")
