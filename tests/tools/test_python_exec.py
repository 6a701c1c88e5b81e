"""Tests for the python_exec tool, with real child processes (no mocks).

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
import shutil
import signal
import socket
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from llm_eval.tools.python_exec import PythonExecLimits, PythonExecResult, run_python

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
    assert "isolated_mode" in result.isolation and "tempdir" in result.isolation
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
    assert "_child_" not in result.stderr  # bootstrap frames are hidden
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
    if "unprivileged_uid" not in result.isolation:
        pytest.skip("without a per-call uid an escaped session cannot be found reliably")
    await asyncio.sleep(0.2)
    assert _live_processes_named(marker) == []


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


@pytest.fixture
def root_owned_dir() -> Iterator[Path]:
    """A 0755 directory owned by the test's user, in the checkout, outside the call's directory."""
    path = Path(tempfile.mkdtemp(prefix=".pyexec_write_probe_", dir=Path(__file__).parent))
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


async def test_writing_to_a_project_directory_fails(root_owned_dir: Path) -> None:
    target = root_owned_dir / "pwned.txt"
    code = f"open({str(target)!r}, 'w').write('x')"
    result = await run_python(code, FAST)
    if "unprivileged_uid" not in result.isolation:
        pytest.skip("not root, so the code runs as our own user and may write our files")
    # The checkout is masked (or, under /tmp, hidden by the private /tmp): the path is not there.
    hidden = "masked_project" in result.isolation or (
        "private_tmp" in result.isolation and target.is_relative_to("/tmp")
    )
    expected_error = "FileNotFoundError" if hidden else "PermissionError"
    assert expected_error in result.stderr
    assert not target.exists()


async def test_writing_to_shared_tmp_does_not_reach_the_host() -> None:
    target = Path("/tmp") / f"pyexec_probe_{uuid.uuid4().hex}"
    code = f"open({str(target)!r}, 'w').write('x')\nprint('written')"
    try:
        result = await run_python(code, FAST)
        if "private_tmp" not in result.isolation:
            pytest.skip("no mount namespace here: /tmp is world-writable and shared")
        assert result.stdout == "written\n"  # it landed in the private tmpfs
        assert not target.exists()
    finally:
        target.unlink(missing_ok=True)


async def test_workdir_is_removed_afterwards() -> None:
    result = await run_python("import os\nprint(os.getcwd())\nopen('f', 'w').write('x')", FAST)
    workdir = Path(result.stdout.strip())
    assert workdir.name.startswith("llm_eval_pyexec_")
    assert not workdir.exists()


async def test_environment_has_no_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    monkeypatch.setenv("HF_TOKEN", "hf-test-secret")
    monkeypatch.setenv("MY_CLIENT_SECRET", "shh-test-secret")
    result = await run_python("import json, os\nprint(json.dumps(dict(os.environ)))", FAST)
    env = json.loads(result.stdout)
    assert not [name for name in env if "API_KEY" in name or "TOKEN" in name]
    assert not [name for name in env if "SECRET" in name]
    assert "test-secret" not in result.stdout
    assert env["HOME"] == env["TMPDIR"] and "llm_eval_pyexec_" in env["HOME"]


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
    if "no_network" not in result.isolation:
        pytest.skip("this machine allows no network namespace (not root, no user namespaces)")
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


@pytest.mark.skipif(os.geteuid() != 0, reason="uid drop only happens when running as root")
async def test_root_runs_as_unprivileged_uid() -> None:
    result = await run_python("import os\nprint(os.getuid(), os.getgid(), os.getgroups())", FAST)
    uid, gid, groups = result.stdout.split(maxsplit=2)
    assert int(uid) != 0 and int(gid) != 0 and groups.strip() == "[]"
    assert "unprivileged_uid" in result.isolation


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
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="mount namespaces need root here")


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
        if os.geteuid() != 0 and "ipc_namespace" not in result.isolation:
            pytest.skip("not root and no user namespaces: the host's IPC namespace is shared")
        leftovers = _host_ipc_ids(key)
        assert leftovers == {kind: [] for kind in IPC_KINDS}
        assert "ipc_namespace" in result.isolation
    finally:
        _remove_host_ipc(_host_ipc_ids(key))


async def test_detached_sysv_shared_memory_is_freed_at_once() -> None:
    # A segment nobody has attached holds memory that no process's accounting shows.
    code = (
        "import ctypes\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "libc.shmat.restype = ctypes.c_void_p\n"
        "size = 32 << 20\n"
        "ident = libc.shmget(0, ctypes.c_size_t(size), 0o1600)  # IPC_PRIVATE, IPC_CREAT\n"
        "addr = libc.shmat(ident, None, 0)\n"
        "ctypes.memset(addr, 1, size)\n"
        "libc.shmdt(ctypes.c_void_p(addr))\n"
        "info = ctypes.create_string_buffer(512)\n"
        "state = 'KEPT' if libc.shmctl(ident, 2, info) == 0 else 'GONE'  # IPC_STAT\n"
        "print(ident >= 0, state, ident, __import__('os').getuid())\n"
    )
    result = await run_python(code, FAST)
    fields = result.stdout.split()
    if len(fields) == 4 and fields[1] == "KEPT":  # left on the host: remove it
        _, _, ident, uid = fields
        lines = Path("/proc/sysvipc/shm").read_text().splitlines()[1:]
        if [ident, uid] in ([f[1], f[7]] for f in map(str.split, lines)):
            _remove_host_ipc({"shm": [int(ident)], "msg": [], "sem": []})
    if os.geteuid() != 0 and "ipc_limits" not in result.isolation:
        pytest.skip("not root and no IPC namespace of our own to configure")
    assert fields[:2] == ["True", "GONE"], result.stdout + result.stderr
    assert "ipc_limits" in result.isolation


@needs_root
async def test_workdir_is_a_size_capped_tmpfs() -> None:
    limits = PythonExecLimits(timeout_s=5.0, file_size_mb=4, tmpfs_mb=8)
    code = (
        "import os\n"
        "written = 0\n"
        "try:\n"
        "    for i in range(40):\n"
        "        with open(f'chunk{i}', 'wb') as f:\n"
        "            f.write(b'x' * (1 << 20))\n"
        "        written += 1\n"
        "finally:\n"
        "    print(written, flush=True)\n"
    )
    result = await run_python(code, limits)
    assert "No space left on device" in result.stderr, result.stdout + result.stderr
    assert int(result.stdout) < 8
    assert "workdir_tmpfs" in result.isolation


@needs_root
async def test_run_lock_is_masked_and_nothing_persists_there() -> None:
    name = f"pyexec_probe_{uuid.uuid4().hex}"
    host_path = Path("/run/lock") / name
    code = (
        "import socket\n"
        "for action in ('file', 'socket'):\n"
        "    try:\n"
        "        if action == 'file':\n"
        f"            open('/run/lock/{name}', 'w').write('x')\n"
        "        else:\n"
        "            socket.socket(socket.AF_UNIX).bind("
        f"'/run/lock/{name}.sock')\n"
        "        print(action, 'CREATED')\n"
        "    except OSError as exc:\n"
        "        print(action, type(exc).__name__)\n"
    )
    try:
        result = await run_python(code, FAST)
        assert "CREATED" not in result.stdout, result.stdout
        assert not host_path.exists() and not host_path.with_suffix(".sock").exists()
        assert "masked_shared_dirs" in result.isolation
    finally:
        host_path.unlink(missing_ok=True)
        host_path.with_suffix(".sock").unlink(missing_ok=True)


@needs_root
async def test_only_the_call_s_private_directories_are_writable() -> None:
    # Walks the whole file tree as the sandbox sees it: the only writable directories are
    # the call's own tmpfs mounts, which vanish with it.
    code = (
        "import json, os\n"
        "writable = []\n"
        "stack = ['/']\n"
        "while stack:\n"
        "    path = stack.pop()\n"
        "    if os.access(path, os.W_OK):\n"
        "        writable.append(path)\n"
        "        continue\n"
        "    try:\n"
        "        with os.scandir(path) as entries:\n"
        "            for e in entries:\n"
        "                if e.is_dir(follow_symlinks=False) and e.path not in ('/proc', '/sys'):\n"
        "                    stack.append(e.path)\n"
        "    except OSError:\n"
        "        pass\n"
        "print(json.dumps({'cwd': os.getcwd(), 'writable': sorted(writable)}))\n"
    )
    result = await run_python(code, PythonExecLimits(timeout_s=20.0, cpu_seconds=20))
    seen = json.loads(result.stdout)
    allowed = {seen["cwd"], "/tmp", "/var/tmp", "/dev/shm"}
    assert set(seen["writable"]) <= allowed, seen["writable"]
    assert "read_only_mounts" in result.isolation


@pytest.fixture
def dotenv_in_checkout() -> Iterator[Path]:
    """A world-readable `.env` in the checkout root (an existing one is left untouched)."""
    path = REPO_ROOT / ".env"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        yield path
        return
    with open(fd, "w") as dotenv:
        dotenv.write("OPENAI_API_KEY=sk-pyexec-test-dotenv\n")
    try:
        path.chmod(0o644)  # whatever the umask
        yield path
    finally:
        path.unlink(missing_ok=True)


def _read_attempt(path: Path) -> str:
    """Code that prints READ plus the content of `path`, or the error class."""
    return (
        "try:\n"
        f"    print('READ', open({str(path)!r}).read()[:80])\n"
        "except OSError as exc:\n"
        "    print(type(exc).__name__)\n"
    )


@needs_root
async def test_project_checkout_and_its_dotenv_are_not_readable(dotenv_in_checkout: Path) -> None:
    answer_key = REPO_ROOT / "data" / "sample_math.jsonl"
    assert answer_key.is_file()
    code = (
        _read_attempt(answer_key)
        + _read_attempt(dotenv_in_checkout)
        + "import os, sympy\n"  # site-packages of the venv inside the checkout still import
        + f"print('LISTING', os.path.exists({str(REPO_ROOT / 'data')!r}), sympy.Integer(6) * 7)\n"
    )
    result = await run_python(code, FAST)
    lines = result.stdout.splitlines()
    assert lines[:2] == ["FileNotFoundError", "FileNotFoundError"], result.stdout + result.stderr
    assert lines[2] == "LISTING False 42"
    assert "masked_project" in result.isolation


@needs_root
async def test_directories_passed_as_masked_and_the_cwd_are_not_readable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    outside = REPO_ROOT.parent  # neither the checkout nor a private temp dir
    if not os.access(outside, os.W_OK):
        pytest.skip(f"{outside} is not writable")
    created: list[Path] = []
    try:
        for label in ("masked", "cwd"):
            folder = Path(tempfile.mkdtemp(prefix=f".pyexec_{label}_", dir=outside))
            created.append(folder)
            folder.chmod(0o755)
            (folder / "answers.txt").write_text("42")
            (folder / "answers.txt").chmod(0o644)
        masked, cwd = created
        monkeypatch.chdir(cwd)
        limits = PythonExecLimits(timeout_s=3.0, masked_dirs=(str(masked),))
        code = _read_attempt(masked / "answers.txt") + _read_attempt(cwd / "answers.txt")
        result = await run_python(code, limits)
        assert result.stdout == "FileNotFoundError\nFileNotFoundError\n", result.stderr
    finally:
        for folder in created:
            shutil.rmtree(folder, ignore_errors=True)


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
    assert "HELD" not in result.stdout, result.stdout
    assert not result.timed_out
    expected = "memory limit: the call's processes together used more than 512 MB"
    assert result.kill_reason == expected
    assert f"[killed: {expected}]" in result.to_tool_content()
    assert {"memory_cgroup", "memory_per_call"} & set(result.isolation)
