"""python_exec cannot change the host: its kernel settings and the harness's keyrings.

Each test has real code try the attack, then reads the host's state back from the harness
(not from inside the call), as an attacker's success would show there.
"""

from __future__ import annotations

import asyncio
import ctypes
import json
import os
import platform
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from llm_eval.tools.python_exec import (
    PythonExecLimits,
    SandboxUnavailableError,
    host_user,
    run_python,
)

pytestmark = pytest.mark.timeout(60)

LIMITS = PythonExecLimits(timeout_s=20.0, cpu_seconds=20, memory_mb=256)
AIO_MAX_NR = Path("/proc/sys/fs/aio-max-nr")
CORE_PATTERN = Path("/proc/sys/kernel/core_pattern")

# The call writes each file, then counts what under /proc/sys, /proc and /sys it could open
# for writing (opening writes nothing; only write() acts on a kernel setting).
TRY_KERNEL_SETTINGS = """
import json, os
wrote = {{}}
for path, value in {writes!r}:
    try:
        with open(path, 'w') as handle:
            handle.write(value)
        wrote[path] = 'WROTE'
    except OSError as exc:
        wrote[path] = exc.strerror
def openable(top, skip=()):
    found = []
    for folder, subfolders, files in os.walk(top):
        subfolders[:] = [d for d in subfolders if os.path.join(folder, d) not in skip]
        for name in files:
            path = os.path.join(folder, name)
            try:
                os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                continue
            found.append(path)
    return found
proc_top = [os.path.join('/proc', n) for n in ('sysrq-trigger', 'irq', 'bus')]
print(json.dumps({{
    'wrote': wrote,
    'proc_sys': openable('/proc/sys'),
    'proc_top': [p for p in proc_top if os.path.isfile(p) and os.access(p, os.W_OK)]
                + [q for p in proc_top if os.path.isdir(p) for q in openable(p)],
    'sys': openable('/sys', skip=('/sys/kernel/debug', '/sys/kernel/tracing')),
}}))
"""


@pytest.fixture
def host_settings() -> Iterator[dict[Path, str]]:
    """The host's values of the settings the call tries to change, restored afterwards."""
    saved = {path: path.read_text() for path in (AIO_MAX_NR, CORE_PATTERN)}
    try:
        yield saved
    finally:
        for path, value in saved.items():
            if path.read_text() != value:
                path.write_text(value)


async def test_a_call_cannot_change_the_host_s_kernel_settings(
    host_settings: dict[Path, str],
) -> None:
    # A harmless change of each: one more allowed async-I/O request, a plain core file name.
    writes = [
        (str(AIO_MAX_NR), str(int(host_settings[AIO_MAX_NR]) + 1)),
        (str(CORE_PATTERN), f"core-probe-{uuid.uuid4().hex[:8]}"),
    ]
    result = await run_python(TRY_KERNEL_SETTINGS.format(writes=writes), LIMITS)
    seen = json.loads(result.stdout or "null") or pytest.fail(result.stderr)
    after = {path: path.read_text() for path in host_settings}
    assert after == host_settings, seen["wrote"]
    assert "WROTE" not in seen["wrote"].values(), seen["wrote"]
    assert seen["proc_sys"] == [], f"{len(seen['proc_sys'])} writable: {seen['proc_sys'][:5]}"
    assert seen["proc_top"] == [] and seen["sys"] == [], seen


def _host_ids(comm: str) -> list[tuple[str, str]]:
    """The Uid and Gid lines (real, effective, saved, fs) the host sees for processes `comm`."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "comm").read_text().strip() == comm:
                lines = (entry / "status").read_text().splitlines()
                ids = {line.split(":")[0]: line.split(":")[1].split() for line in lines}
                found.append((" ".join(ids["Uid"]), " ".join(ids["Gid"])))
        except OSError:
            continue
    return found


async def test_the_call_s_processes_belong_to_an_unprivileged_host_user() -> None:
    # Read on the host: inside, uid_map shows a nested namespace's view, whatever the host uid.
    marker = "hu" + uuid.uuid4().hex[:12]
    code = (
        "import time\n"
        f"open('/proc/self/comm', 'w').write({marker!r})\n"
        "print('ready', flush=True)\n"
        "time.sleep(2)\n"
    )
    call = asyncio.ensure_future(run_python(code, LIMITS))
    seen: list[tuple[str, str]] = []
    while not call.done() and not seen:
        await asyncio.sleep(0.02)
        seen = _host_ids(marker)
    result = await call
    assert result.stdout == "ready\n", result.stderr
    expected = " ".join([str(host_user.SANDBOX_HOST_ID)] * 4) if os.geteuid() == 0 else None
    assert seen, "the call's process was never seen"
    for uid, gid in seen:
        assert "0" not in uid.split() and "0" not in gid.split(), seen
        assert expected is None or uid == gid == expected, seen
    assert "unprivileged_host_uid" in result.isolation


# Syscall numbers of add_key and keyctl by machine: the harness side of the keyring test.
_KEY_SYSCALLS = {"x86_64": (248, 250), "aarch64": (217, 219)}
KEY_SPEC_SESSION_KEYRING = -3
KEYCTL_UPDATE, KEYCTL_READ, KEYCTL_SEARCH, KEYCTL_INVALIDATE = 2, 11, 10, 21

# The call looks for the key by description in "its" session keyring and by serial, reads
# it, overwrites it and lists /proc/keys; it prints what worked.
TRY_KEYRING = """
import ctypes, json, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
keyctl, serial, description = {keyctl}, {serial}, {description!r}
def call(*args):
    result = libc.syscall(ctypes.c_long(keyctl), *(ctypes.c_long(a) if isinstance(a, int)
                                                  else a for a in args))
    return result if result >= 0 else os.strerror(ctypes.get_errno())
buffer = ctypes.create_string_buffer(256)
found = call(10, -3, b'user', description.encode(), 0)
read = call(11, serial, buffer, 256)
data = buffer.raw[:read] if isinstance(read, int) else b''
update = call(2, serial, b'overwritten-by-the-call', 23)
listed = description in open('/proc/keys').read()
print(json.dumps({{'search': found, 'read': read, 'data': data.decode('latin-1'),
                  'update': update, 'listed': listed}}))
"""


def _syscall_numbers() -> tuple[int, int]:
    numbers = _KEY_SYSCALLS.get(platform.machine())
    if numbers is None:
        pytest.skip(f"no keyring syscall numbers for {platform.machine()}")
    return numbers


@pytest.fixture
def harness_key() -> Iterator[tuple[int, str, bytes]]:
    """A `user` key with a random payload in the harness's session keyring, removed after."""
    add_key, keyctl = _syscall_numbers()
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    description = f"llm-eval-probe-{uuid.uuid4().hex}"
    payload = os.urandom(24).hex().encode()
    serial = libc.syscall(
        ctypes.c_long(add_key), b"user", description.encode(), payload,
        ctypes.c_size_t(len(payload)), ctypes.c_long(KEY_SPEC_SESSION_KEYRING),
    )  # fmt: skip
    if serial < 0:
        pytest.skip(f"add_key failed here: {os.strerror(ctypes.get_errno())}")
    try:
        yield serial, description, payload
    finally:
        libc.syscall(ctypes.c_long(keyctl), ctypes.c_long(KEYCTL_INVALIDATE), ctypes.c_long(serial))


def _read_key(serial: int) -> bytes:
    _, keyctl = _syscall_numbers()
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    buffer = ctypes.create_string_buffer(256)
    size = libc.syscall(
        ctypes.c_long(keyctl), ctypes.c_long(KEYCTL_READ), ctypes.c_long(serial), buffer,
        ctypes.c_long(len(buffer)),
    )  # fmt: skip
    assert size >= 0, os.strerror(ctypes.get_errno())
    return buffer.raw[:size]


async def test_a_call_cannot_read_or_change_the_harness_s_session_keyring(
    harness_key: tuple[int, str, bytes],
) -> None:
    serial, description, payload = harness_key
    _, keyctl = _syscall_numbers()
    code = TRY_KEYRING.format(keyctl=keyctl, serial=serial, description=description)
    result = await run_python(code, LIMITS)
    seen = json.loads(result.stdout or "null") or pytest.fail(result.stderr)
    assert _read_key(serial) == payload  # the host reads its key back unchanged
    assert not isinstance(seen["search"], int), seen  # not found in the call's session keyring
    assert not isinstance(seen["read"], int) and seen["data"] == "", seen
    assert not isinstance(seen["update"], int), seen
    assert seen["listed"] is False, seen
    assert payload.decode() not in result.stdout
    assert "own_session_keyring" in result.isolation


@pytest.mark.skipif(os.geteuid() != 0, reason="only a root harness drops privileges")
async def test_staged_trees_stay_out_of_the_host_s_mounts() -> None:
    # The interpreter's trees the call's uid cannot reach are bound in the child's own mount
    # namespace: the host sees empty directories and no new mount.
    result = await run_python("import json\nprint(json.dumps([1]))", LIMITS)
    assert result.stdout == "[1]\n", result.stderr
    mounts = Path("/proc/self/mountinfo").read_text()
    assert "llm_eval_sandbox_" not in mounts
    for _, staged in host_user._STAGE.binds:  # a staged file (a lone binary) stays empty too
        assert os.listdir(staged) == [] if os.path.isdir(staged) else not os.path.getsize(staged)


@pytest.mark.skipif(os.geteuid() != 0, reason="only a root harness drops privileges")
async def test_a_child_that_cannot_become_the_sandbox_user_runs_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A tree that cannot be bound (here: gone) stops the call before bwrap, with the reason.
    staged = tmp_path / "stage"
    staged.mkdir()
    binds = [*host_user._STAGE.binds, (str(tmp_path / "missing"), str(staged))]
    monkeypatch.setattr(host_user._STAGE, "binds", binds)
    marker = tmp_path / "ran"
    with pytest.raises(SandboxUnavailableError) as raised:
        await run_python(f"open({str(marker)!r}, 'w').write('x')", LIMITS)
    assert str(raised.value).startswith(
        "python_exec cannot start a call as an unprivileged user: binding what uid 65534 "
        f"cannot reach failed: binding {tmp_path / 'missing'}: No such file or directory"
    ), str(raised.value)
    assert not marker.exists()


async def test_a_machine_without_known_keyring_calls_runs_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(platform, "machine", lambda: "sparc64")
    marker = tmp_path / "ran"
    with pytest.raises(SandboxUnavailableError, match="keyctl's syscall number on sparc64"):
        await run_python(f"open({str(marker)!r}, 'w').write('x')", LIMITS)
    assert not marker.exists()
