"""Tests for the python_exec tool, with real bwrap sandboxes and real child processes.

Each test runs real model-style code and checks what the parent sees; the limits are short
so the whole file stays well under a minute.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import json
import os
import resource
import signal
import socket
import sys
import time
import uuid
from pathlib import Path

import pytest

from llm_eval.tools.python_exec import (
    PythonExecLimits,
    PythonExecResult,
    SandboxUnavailableError,
    command,
    run_python,
)
from llm_eval.tools.python_exec import cgroups as cgroups_module
from llm_eval.tools.python_exec.cgroups import _hierarchies

pytestmark = pytest.mark.timeout(60)

FAST = PythonExecLimits(timeout_s=3.0, cpu_seconds=10, memory_mb=256)


def _live_processes_named(comm: str) -> list[int]:
    """Pids of non-zombie processes whose /proc/PID/comm is `comm`."""
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            name = (entry / "comm").read_text().strip()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if name == comm and state not in ("Z", "X"):
            found.append(int(entry.name))
    return found


async def test_simple_print() -> None:
    result = await run_python("print('hello', 6 * 7)", FAST)
    assert result.stdout == "hello 42\n"
    assert result.exit_code == 0
    assert not result.timed_out and not result.truncated
    assert {"bwrap", "allow_list", "no_user_namespaces"} <= set(result.isolation)
    assert result.to_tool_content() == "hello 42"


async def test_stdlib_and_site_packages_import_after_privilege_drop() -> None:
    # The interpreter may live under /root (0700); after the uid drop it must still import.
    result = await run_python("import fractions, json, math, decimal\nprint(math.factorial(5))")
    assert result.stdout == "120\n", result.stderr


async def test_exception_gives_stderr_and_exit_code() -> None:
    result = await run_python("def f():\n    raise ValueError('boom')\nf()", FAST)
    assert result.exit_code == 1
    assert "ValueError: boom" in result.stderr
    assert "main.py" in result.stderr and "line 2" in result.stderr
    assert "run_code" not in result.stderr  # bootstrap frames are hidden
    content = result.to_tool_content()
    assert "ValueError: boom" in content and "[exit code 1]" in content


async def test_sys_exit_code_is_passed_through() -> None:
    result = await run_python("import sys\nprint('bye')\nsys.exit(3)", FAST)
    assert result.exit_code == 3 and result.stdout == "bye\n"


async def test_infinite_loop_is_killed_by_timeout_and_keeps_earlier_output() -> None:
    limits = PythonExecLimits(timeout_s=2.0, cpu_seconds=30)
    result = await run_python("print('started')\nwhile True: pass", limits)
    assert result.timed_out and result.exit_code is None
    assert result.stdout == "started\n"  # line buffering: printed before the kill
    assert "[killed: timed out after 2 s]" in result.to_tool_content()


async def test_cpu_limit_kills_busy_loop_before_the_timeout() -> None:
    limits = PythonExecLimits(timeout_s=8.0, cpu_seconds=1)
    result = await run_python("while True: pass", limits)
    assert not result.timed_out
    assert result.exit_code == -signal.SIGXCPU
    assert "[killed: CPU time limit]" in result.to_tool_content()


FORK_BOMBS = {
    "plain": "while True: os.fork()",
    # Survives fork failures, so the processes are still alive when the timeout hits.
    "resilient": "while True:\n    try:\n        os.fork()\n    except OSError:\n        pass",
}


@pytest.mark.parametrize("kind", sorted(FORK_BOMBS))
async def test_fork_bomb_is_contained_and_leaves_no_processes(kind: str) -> None:
    marker = "fb" + uuid.uuid4().hex[:12]  # comm holds 15 characters
    code = (
        "import os\n"
        f"open('/proc/self/comm', 'w').write({marker!r})\n"
        "print('armed', flush=True)\n" + FORK_BOMBS[kind]
    )
    result = await run_python(code, FAST)
    assert result.stdout.startswith("armed"), result.stderr  # the marker really was set
    # Killed processes may linger as zombies for a moment; none may still be running.
    deadline = time.monotonic() + 1.0
    while (survivors := _live_processes_named(marker)) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert survivors == []


async def test_process_that_leaves_the_session_is_killed() -> None:
    marker = "es" + uuid.uuid4().hex[:12]
    code = (
        "import os, time\n"
        f"open('/proc/self/comm', 'w').write({marker!r})\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    time.sleep(60)\n"
        "print('parent done', flush=True)\n"
    )
    result = await run_python(code, FAST)
    assert result.stdout == "parent done\n" and result.exit_code == 0
    # The orphan holds the pipes for 60 s; the result did not wait for it to the timeout.
    assert not result.timed_out
    deadline = time.monotonic() + 1.0
    while (survivors := _live_processes_named(marker)) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert survivors == []


@pytest.mark.parametrize(
    "code",
    ["x = bytearray(4 * 1024**3)", "x = []\nwhile True:\n    x.append(' ' * 10**6)"],
    ids=["one-allocation", "growing-list"],
)
async def test_memory_bomb_fails(code: str) -> None:
    result = await run_python(code, FAST)
    assert result.exit_code != 0
    assert not result.timed_out
    content = result.to_tool_content()
    assert "MemoryError" in result.stderr or result.exit_code == -signal.SIGKILL
    assert "memory" in content.lower()


async def test_huge_print_is_truncated_quickly_with_bounded_parent_memory() -> None:
    peak_before_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = await run_python("print('x' * 100_000_000)", PythonExecLimits(timeout_s=10.0))
    assert result.truncated
    assert len(result.stdout) == PythonExecLimits().output_bytes
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak_before_kib) / 1024
    assert grown_mib < 50, f"parent peak memory grew by {grown_mib:.0f} MiB"
    assert "[output truncated]" in result.to_tool_content()


async def test_moderate_output_over_the_cap_finishes_normally() -> None:
    result = await run_python("print('y' * 200_000)\nprint('end')", FAST)
    assert result.exit_code == 0 and result.kill_reason is None
    assert result.truncated and len(result.stdout) == FAST.output_bytes


async def test_file_size_limit() -> None:
    limits = PythonExecLimits(timeout_s=3.0, file_size_mb=1)
    result = await run_python("open('big', 'wb').write(b'x' * (2 * 1024 * 1024))", limits)
    assert result.exit_code == 1 and "File too large" in result.stderr


async def test_environment_has_no_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    monkeypatch.setenv("HF_TOKEN", "hf-test-secret")
    monkeypatch.setenv("MY_CLIENT_SECRET", "shh-test-secret")
    result = await run_python("import json, os\nprint(json.dumps(dict(os.environ)))", FAST)
    env = json.loads(result.stdout)
    assert not [name for name in env if "API_KEY" in name or "TOKEN" in name]
    assert not [name for name in env if "SECRET" in name]
    assert "test-secret" not in result.stdout
    assert env["HOME"] == "/sandbox" and env["TMPDIR"] == "/tmp"


async def test_network_is_cut() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        code = (
            "import socket\n"
            "try:\n"
            f"    socket.create_connection(('127.0.0.1', {port}), timeout=2)\n"
            "    print('CONNECTED')\n"
            "except OSError as exc:\n"
            "    print('BLOCKED', exc)\n"
        )
        result = await run_python(code, FAST)
    assert result.stdout.startswith("BLOCKED"), result.stdout


async def test_calls_run_concurrently() -> None:
    # Each call prints when it started and ended; calls that run at the same time overlap.
    code = "import time\nstart = time.time()\ntime.sleep(2)\nprint(start, time.time())"
    limits = PythonExecLimits(timeout_s=60.0, cpu_seconds=30, memory_mb=256)
    results = await asyncio.gather(*(run_python(code, limits) for _ in range(8)))
    spans = [tuple(map(float, r.stdout.split())) for r in results]
    assert len(spans) == 8 and all(len(span) == 2 for span in spans), results
    most_at_once = max(sum(s <= start < e for s, e in spans) for start, _ in spans)
    assert most_at_once >= 4, spans  # run one after another, no two would overlap


async def test_code_runs_as_an_unprivileged_uid_without_capabilities() -> None:
    code = (
        "import os\n"
        "caps = [l.split()[1] for l in open('/proc/self/status') if l.startswith('Cap')]\n"
        "print(os.getuid(), os.getgid(), *caps)\n"
    )
    result = await run_python(code, FAST)
    uid, gid, *caps = result.stdout.split()
    assert int(uid) != 0 and int(gid) != 0
    assert set(caps) == {"0000000000000000"}, result.stdout


def test_tool_content_notes() -> None:
    base = PythonExecResult(
        stdout="", stderr="", exit_code=0, timed_out=False, truncated=False,
        duration_s=0.1, isolation=(),
    )  # fmt: skip
    assert base.to_tool_content() == "[no output]"
    killed = PythonExecResult(
        stdout="partial\n", stderr="", exit_code=None, timed_out=True, truncated=True,
        duration_s=10.0, isolation=(), kill_reason="timed out after 10 s",
    )  # fmt: skip
    assert killed.to_tool_content() == (
        "partial\n[killed: timed out after 10 s]\n[output truncated]"
    )
    memory = PythonExecResult(
        stdout="", stderr="Traceback ...\nMemoryError\n", exit_code=1, timed_out=False,
        truncated=False, duration_s=0.1, isolation=(),
    )  # fmt: skip
    assert memory.to_tool_content().endswith(
        "MemoryError\n[exit code 1]\n[memory limit reached (MemoryError)]"
    )


REPO_ROOT = Path(__file__).resolve().parents[2]
IPC_KINDS = ("shm", "msg", "sem")


def _host_ipc_ids(key: int) -> dict[str, list[int]]:
    """SysV IPC objects with `key` in the host's IPC namespace, by kind."""
    found: dict[str, list[int]] = {}
    for kind in IPC_KINDS:
        lines = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()[1:]
        found[kind] = [int(f[1]) for f in map(str.split, lines) if int(f[0]) == key]
    return found


def _remove_host_ipc(found: dict[str, list[int]]) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    for ident in found["shm"]:
        libc.shmctl(ident, 0, None)  # IPC_RMID
    for ident in found["msg"]:
        libc.msgctl(ident, 0, None)
    for ident in found["sem"]:
        libc.semctl(ident, 0, 0)


async def test_sysv_ipc_objects_disappear_with_the_call() -> None:
    key = int.from_bytes(os.urandom(3), "big") + 1
    code = (
        "import ctypes\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        f"key, flags = {key}, 0o1600  # IPC_CREAT | 0600\n"
        "ids = [libc.shmget(key, ctypes.c_size_t(4 << 20), flags),\n"
        "       libc.msgget(key, flags), libc.semget(key, 1, flags)]\n"
        "print(*ids)\n"
    )
    try:
        result = await run_python(code, FAST)
        created = [int(i) for i in result.stdout.split()]
        assert len(created) == 3 and min(created) >= 0, result.stdout + result.stderr
        assert _host_ipc_ids(key) == {kind: [] for kind in IPC_KINDS}
        assert "ipc_namespace" in result.isolation
    finally:
        _remove_host_ipc(_host_ipc_ids(key))


def _memory_cgroup_or_skip(result: PythonExecResult) -> None:
    if "memory_cgroup" not in result.isolation:
        pytest.skip("no writable memory cgroup here: memory is bounded per process only")


async def test_detached_sysv_shared_memory_counts_against_the_call_s_memory() -> None:
    # A segment nobody has attached holds memory that no process's own accounting shows.
    code = (
        "import ctypes\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "libc.shmat.restype = ctypes.c_void_p\n"
        "size = 64 << 20\n"
        "for held in range(1, 13):\n"
        "    ident = libc.shmget(0, ctypes.c_size_t(size), 0o1600)  # IPC_PRIVATE, IPC_CREAT\n"
        "    addr = libc.shmat(ident, None, 0)\n"
        "    ctypes.memset(addr, 1, size)\n"
        "    libc.shmdt(ctypes.c_void_p(addr))\n"
        "    print(held * 64, flush=True)\n"
    )
    limits = PythonExecLimits(timeout_s=10.0, memory_mb=256)
    result = await run_python(code, limits)
    _memory_cgroup_or_skip(result)
    held = [int(line) for line in result.stdout.split()]
    assert max(held, default=0) <= 256, result.stdout + result.stderr
    assert result.kill_reason is not None and "memory limit" in result.kill_reason


FILL_SCRATCH = """
import os
total = 0
for place in ('/sandbox', '/tmp', '/dev/shm'):
    try:
        for i in range(1000):
            with open(f'{{place}}/fill{{i}}', 'wb') as f:
                f.write(b'x' * (8 << 20))
            total += 8
    except OSError as exc:
        print(place, exc.strerror, flush=True)
print('TOTAL', total, flush=True)
block = b'\\x01' * ({hold_mb} << 20)  # and memory on top of the files
print('HELD', flush=True)
"""


@pytest.mark.parametrize("tmpfs_mb", [None, 1500])
async def test_files_and_memory_share_one_budget(tmpfs_mb: int | None) -> None:
    # The call tries to keep 1,500 MB in files and memory with memory_mb=512.
    limits = PythonExecLimits(timeout_s=20.0, cpu_seconds=20, memory_mb=512, tmpfs_mb=tmpfs_mb)
    result = await run_python(FILL_SCRATCH.format(hold_mb=1500 - 3 * 128), limits)
    totals = [
        int(line.split()[1]) for line in result.stdout.splitlines() if line.startswith("TOTAL")
    ]
    assert totals and totals[0] <= 3 * 128, result.stdout + result.stderr
    assert result.stdout.count("No space left on device") == 3
    assert "HELD" not in result.stdout
    assert "MemoryError" in result.stderr or result.kill_reason is not None


async def test_no_namespace_and_no_mount_can_be_made_inside() -> None:
    code = (
        "import ctypes, os\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "flags = {'user': 0x10000000, 'mount': 0x20000, 'user+mount': 0x10020000,\n"
        "         'net': 0x40000000, 'pid': 0x20000000}\n"
        "for name, flag in flags.items():\n"
        "    ok = libc.unshare(flag) == 0\n"
        "    print(name, 'MADE' if ok else os.strerror(ctypes.get_errno()))\n"
        "for target in (b'/tmp', b'/sandbox', b'/mnt'):\n"
        "    ok = libc.mount(b'none', target, b'tmpfs', 0, None) == 0\n"
        "    print(target.decode(), 'MOUNTED' if ok else os.strerror(ctypes.get_errno()))\n"
    )
    result = await run_python(code, FAST)
    lines = result.stdout.splitlines()
    assert len(lines) == 8, result.stdout + result.stderr
    assert not [line for line in lines if "MADE" in line or "MOUNTED" in line], lines
    # --disable-userns: the kernel's answer to a new user namespace is "no space" (ENOSPC).
    assert lines[0] == "user No space left on device"
    assert "no_user_namespaces" in result.isolation


@pytest.mark.parametrize("cgroups", [True, False], ids=["cgroups", "rlimit-only"])
async def test_process_limit_holds_for_the_call(
    cgroups: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Without cgroups RLIMIT_NPROC alone holds: the call is never host root, whom it spares.
    if not cgroups:
        monkeypatch.setattr(cgroups_module, "_hierarchies", lambda: ())
    code = (
        "import os, time\n"
        "started = 0\n"
        "for _ in range(40):\n"
        "    try:\n"
        "        if os.fork() == 0:\n"
        "            time.sleep(3)\n"
        "            os._exit(0)\n"
        "        started += 1\n"
        "    except OSError:\n"
        "        break\n"
        "print(started, flush=True)\n"
    )
    result = await run_python(code, PythonExecLimits(timeout_s=10.0, max_processes=8))
    assert cgroups or "pids_cgroup" not in result.isolation
    assert int(result.stdout) < 8, result.stdout + result.stderr


async def test_a_machine_where_bwrap_cannot_run_gets_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What bwrap says where user namespaces are forbidden; nothing may then run unsandboxed.
    refusing = tmp_path / "bwrap"
    refusing.write_text(
        "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n"
    )
    refusing.chmod(0o755)
    tmp_path.chmod(0o755)  # bwrap's own folder must be open to the call's uid, as site-packages is
    monkeypatch.setattr(command, "bwrap_path", lambda: str(refusing))
    marker = tmp_path / "ran"
    with pytest.raises(SandboxUnavailableError) as raised:
        await run_python(f"open({str(marker)!r}, 'w').write('x')", FAST)
    assert str(raised.value) == (
        "python_exec cannot build its bwrap sandbox on this machine: "
        "bwrap: No permissions to create new namespace"
    )
    assert not marker.exists()


HARNESS = """
import asyncio, sys
from llm_eval.tools.python_exec import PythonExecLimits, run_python
asyncio.run(run_python(sys.argv[1], PythonExecLimits(timeout_s=120, cpu_seconds=120)))
"""


def _kill_all(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("harness_signal", [signal.SIGKILL, signal.SIGTERM], ids=["kill", "term"])
async def test_sandbox_dies_with_the_harness(
    tmp_path: Path, harness_signal: signal.Signals
) -> None:
    marker = "hd" + uuid.uuid4().hex[:12]
    code = (
        "import os, time\n"
        f"open('/proc/self/comm', 'w').write({marker!r})\n"
        f"open({marker!r} + '.dat', 'wb').write(b'x' * 4096)\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "time.sleep(60)\n"
    )
    scratch = tmp_path / "harness_tmp"
    scratch.mkdir()
    harness = await asyncio.create_subprocess_exec(
        sys.executable, "-c", HARNESS, code, cwd=REPO_ROOT,
        env={**os.environ, "TMPDIR": str(scratch)},
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 15.0
        while len(_live_processes_named(marker)) < 2 and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert len(_live_processes_named(marker)) == 2, "the sandboxed code never started"
        harness.send_signal(harness_signal)
        await harness.wait()
        deadline = time.monotonic() + 3.0
        while (survivors := _live_processes_named(marker)) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert survivors == []
        left = [p for p in scratch.rglob("*") if not p.is_dir()]
        assert left == []  # the call's files lived in its own tmpfs
        # The killed harness could not remove its cgroups; the next harness to start does.
        cleaner = await asyncio.create_subprocess_exec(
            sys.executable, "-c", HARNESS, "pass", cwd=REPO_ROOT
        )
        await cleaner.wait()
        stale = [
            group
            for hierarchy in _hierarchies()
            for group in hierarchy.base.glob(f"call-*-{harness.pid}-*")
        ]
        assert stale == []
    finally:
        _kill_all(_live_processes_named(marker))
        if harness.returncode is None:
            harness.kill()
            await harness.wait()


MEMORY_HOG = """
import os, time
size = int({share} * {memory_mb} * 1024 * 1024)
pids = []
for _ in range({processes}):
    pid = os.fork()
    if pid == 0:
        block = b'\\x01' * size  # written, so it is really resident
        time.sleep(1.5)
        os._exit(0)
    pids.append(pid)
codes = [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in pids]
print('HELD' if codes == [0] * len(pids) else f'FAILED {{codes}}')
"""


@pytest.mark.parametrize("processes", [1, 4])
async def test_memory_limit_applies_to_the_call_as_a_whole(processes: int) -> None:
    limits = PythonExecLimits(timeout_s=10.0, memory_mb=512)
    code = MEMORY_HOG.format(share=0.4, memory_mb=limits.memory_mb, processes=processes)
    result = await run_python(code, limits)
    if processes == 1:
        assert result.stdout == "HELD\n" and result.exit_code == 0, result.stderr
        return
    _memory_cgroup_or_skip(result)
    assert "HELD" not in result.stdout, result.stdout
    assert not result.timed_out
    expected = "memory limit: the call's processes together used more than 512 MB"
    assert result.kill_reason == expected
    assert f"[killed: {expected}]" in result.to_tool_content()
