"""A local server process for the tests: a free port, and waiting until it answers."""

from __future__ import annotations

import socket
import subprocess
import time
import urllib.request
from pathlib import Path


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_ready(
    url: str, process: subprocess.Popen[bytes], log: Path, deadline_s: float = 120
) -> bytes:
    """Poll `url` until it answers 200 and return its body; fail with the log's tail if the
    process exits or the deadline passes first."""
    deadline = time.monotonic() + deadline_s
    while True:
        if process.poll() is not None:
            raise RuntimeError(
                f"the server exited with {process.returncode}:\n"
                + log.read_text(errors="replace")[-3000:]
            )
        if time.monotonic() > deadline:
            raise TimeoutError(f"the server did not answer {url} in {deadline_s} s")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    body: bytes = response.read()
                    return body
        except OSError:
            time.sleep(0.5)
