"""The direct route's HTTP: a JSON body posted over one aiohttp session per event loop.

A bare aiohttp loop needs about 1 ms of CPU per request at 64 in flight, the openai SDK over
the same aiohttp about 5 ms (its typed request transform and response layer, per call):
`perf/transport_floor.py` measures both. So the direct route posts the body it built as bytes
and reads the reply's bytes itself; `chat_completions` gives them meaning.

One session (one connection pool) serves every model of a run: models on one server reuse its
connections. The pool has no limit of its own (aiohttp's default is 100 connections): the
runner's semaphores and each connection's adaptive limiter already decide how many calls are
in flight, and a second cap would queue calls they admitted. Each attempt is bounded by the
runner (`ModelClient` wraps it in the request timeout), so the session sets no timeout. Bodies
are read through `body_limits.bounded_body`, compressed or not, so no reply can grow past the
run's limits. A session is bound to the event loop that made it: sessions are kept per loop
and closed by `close_sessions` at the end of a run.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING

from llm_eval.providers.body_limits import bounded_body, current_limits

if TYPE_CHECKING:
    import aiohttp
    from multidict import CIMultiDictProxy

_SESSIONS: dict[asyncio.AbstractEventLoop, aiohttp.ClientSession] = {}
_ENCODINGS = "gzip, deflate"
"""What the route accepts: the encodings `bounded_body` decodes (aiohttp would add `br`)."""
_CHUNK = 64 * 1024


@dataclass(frozen=True)
class HttpReply:
    """A reply's status, headers and whole (decoded, bounded) body."""

    status: int
    headers: CIMultiDictProxy[str]
    body: bytes

    def header(self, name: str) -> str | None:
        """A header by its name, whatever its case."""
        return self.headers.get(name)


def shared_session() -> aiohttp.ClientSession:
    """The session of the running event loop, made on first use."""
    loop = asyncio.get_running_loop()
    session = _SESSIONS.get(loop)
    if session is not None and not session.closed:
        return session
    import aiohttp

    # A session left by an earlier event loop is unusable in this one: forget it.
    for stale in [owner for owner in _SESSIONS if owner.is_closed()]:
        del _SESSIONS[stale]
    session = aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=0),
        timeout=aiohttp.ClientTimeout(total=None),
        auto_decompress=False,  # decoded by `bounded_body`, which counts what it inflates
        headers={"Accept-Encoding": _ENCODINGS},
    )
    _SESSIONS[loop] = session
    return session


async def post_json(url: str, payload: bytes, headers: dict[str, str]) -> HttpReply:
    """POST `payload` (JSON bytes) and read the whole reply within the run's body limits.

    Raises `ResponseTooLarge` past a limit and aiohttp's own errors for a connection that
    failed; an HTTP error status is a reply like any other.
    """
    async with shared_session().post(url, data=payload, headers=headers) as response:
        return HttpReply(response.status, response.headers, await _read_bounded(response))


async def _read_bounded(response: aiohttp.ClientResponse) -> bytes:
    limits = current_limits()
    encoding = response.headers.get("Content-Encoding")
    length = response.content_length
    if encoding is None and length is not None and length <= limits.max_bytes:
        # The common case, read in one step: a plain body whose announced size is allowed
        # (aiohttp reads no more than Content-Length).
        return await response.read()
    encodings = [part.strip().lower() for part in (encoding or "").split(",") if part.strip()]
    raw = response.content.iter_chunked(_CHUNK)
    return b"".join([piece async for piece in bounded_body(raw, encodings, limits)])


async def close_sessions() -> None:
    """Close the session of the running event loop (its connections with it)."""
    session = _SESSIONS.pop(asyncio.get_running_loop(), None)
    if session is not None:
        await session.close()
