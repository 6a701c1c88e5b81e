"""Reading a call's output with a cap, and waiting for it to end or to be killed."""

from __future__ import annotations

import asyncio
import os

# A flood of output is drained up to this many times `output_bytes` (at least 1 MiB) so a
# program that prints a lot and then finishes still reports its exit; past it we kill.
DRAIN_FACTOR = 16
MIN_DRAIN_CEILING = 1 << 20
_READ_CHUNK = 1 << 16
_POLL_S = 0.01


class CappedBuffer:
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


class OutputCapture:
    """stdout (head) and stderr (tail) of one call, and whether together they flooded."""

    def __init__(self, output_bytes: int) -> None:
        self.stdout = CappedBuffer(output_bytes, keep_tail=False)
        self.stderr = CappedBuffer(output_bytes, keep_tail=True)
        self.flooded = asyncio.Event()
        self._ceiling = max(MIN_DRAIN_CEILING, DRAIN_FACTOR * output_bytes)

    async def drain(self, stream: asyncio.StreamReader | None, sink: CappedBuffer) -> None:
        """Read `stream` to EOF into `sink`; flag a flood so the caller can kill the call.

        Reading never stops early: a child blocked on a full pipe would otherwise hang until
        the timeout instead of finishing or being killed.
        """
        if stream is None:
            return
        while chunk := await stream.read(_READ_CHUNK):
            sink.add(chunk)
            if self.stdout.seen + self.stderr.seen > self._ceiling:
                self.flooded.set()

    @property
    def truncated(self) -> bool:
        return self.stdout.truncated or self.stderr.truncated


async def wait_for_exit(
    proc: asyncio.subprocess.Process, flooded: asyncio.Event, timeout_s: float
) -> str | None:
    """Wait for the process; return why we must kill it ("timeout", "output") or None."""
    exited = asyncio.ensure_future(process_exited(proc))
    flood = asyncio.ensure_future(flooded.wait())
    try:
        await asyncio.wait({exited, flood}, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
    finally:
        flood.cancel()
        exited.cancel()
    if exited.done() and not exited.cancelled():
        return None
    return "output" if flooded.is_set() else "timeout"


async def process_exited(proc: asyncio.subprocess.Process) -> None:
    """Return once the process itself has ended.

    Not `proc.wait()`: asyncio's wait also waits for the pipes to close. A pidfd becomes
    readable the moment the process ends; without pidfd support, poll the return code.
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
