"""A ceiling on how much a reply's body may hold once decoded, on every HTTP route.

A hostile or broken endpoint can send a small gzip body that inflates a thousandfold, or a
gigabyte of plain bytes fast enough that no timeout fires; read whole, either takes the
harness's memory with it. The direct route (`http_transport`, aiohttp) reads every body
through `bounded_body`; LiteLLM's httpx clients hand every reply to `bound_response` before its
body is read, which does the same. The body is then decoded here in small steps, counted, and
the read fails with `ResponseTooLarge` once it passes
`max_bytes` or inflates more than `max_ratio` times its compressed size. The call then ends as
a `response_too_large` error row, never retried (the same server would send the same body).

The limits come from the runner's settings through a context variable, set around each call,
so the clients (shared by models, built once per event loop) need not know them.
"""

from __future__ import annotations

import sys
import zlib
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cache
from typing import Any

DEFAULT_MAX_BYTES = 16 * 1024 * 1024
DEFAULT_MAX_RATIO = 100.0
RATIO_FLOOR_BYTES = 1024 * 1024
"""Below this many decoded bytes the ratio is not judged: a short, repetitive reply (a model
repeating one word) compresses far better than 100:1 and is harmless at that size."""
_STEP = 64 * 1024
"""Most bytes one decompression step may produce: what one step can add to memory."""
_DECODABLE = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": 0}
"""Encodings decoded here, by zlib window setting (deflate: 0 is guessed below)."""


@dataclass(frozen=True)
class BodyLimits:
    """How large a decoded reply may grow, absolutely and relative to its compressed size."""

    max_bytes: int = DEFAULT_MAX_BYTES
    max_ratio: float = DEFAULT_MAX_RATIO


DEFAULT_LIMITS = BodyLimits()
_LIMITS: ContextVar[BodyLimits] = ContextVar("body_limits", default=DEFAULT_LIMITS)


@contextmanager
def body_limits(limits: BodyLimits) -> Iterator[None]:
    """Apply `limits` to every reply read inside the block (the current task's calls)."""
    token = _LIMITS.set(limits)
    try:
        yield
    finally:
        _LIMITS.reset(token)


def current_limits() -> BodyLimits:
    """The limits that apply to the reply being read now (the current task's)."""
    return _LIMITS.get()


class ResponseTooLarge(Exception):
    """A reply's body passed a limit while it was read; the rest was never read."""

    MARKER = "reply body too large"
    """Words every message holds: LiteLLM re-raises its own exception types, and the text is
    sometimes all that survives of this one."""


def find_too_large(exc: BaseException) -> ResponseTooLarge | None:
    """The `ResponseTooLarge` behind `exc` (itself, a cause or a context), if any."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, ResponseTooLarge):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def too_large_message(exc: BaseException) -> str | None:
    """The message of the limit `exc` stands for, or None if it is no such failure."""
    found = find_too_large(exc)
    if found is not None:
        return str(found)
    text = str(exc)
    return text if ResponseTooLarge.MARKER in text else None


async def bounded_body(
    raw: AsyncIterator[bytes], encodings: list[str], limits: BodyLimits
) -> AsyncIterator[bytes]:
    """The decoded body of `raw`, in bounded steps; `ResponseTooLarge` past a limit.

    `encodings` are the Content-Encoding values in the order the server applied them; the
    ones this module cannot decode pass through as bytes, as httpx would pass them.
    """
    decoders = [_Decoder(name) for name in reversed(encodings) if name in _DECODABLE]
    received = decoded = 0
    async for chunk in raw:
        received += len(chunk)
        for piece in _decode(decoders, chunk):
            decoded += len(piece)
            _check(decoded, received, limits)
            yield piece
    for piece in _flush(decoders):
        decoded += len(piece)
        _check(decoded, received, limits)
        yield piece


def _check(decoded: int, received: int, limits: BodyLimits) -> None:
    if decoded > limits.max_bytes:
        raise ResponseTooLarge(
            f"{ResponseTooLarge.MARKER}: more than {limits.max_bytes:,} bytes decoded "
            "(runner.max_response_bytes); the rest was not read"
        )
    if decoded > RATIO_FLOOR_BYTES and decoded > limits.max_ratio * max(received, 1):
        raise ResponseTooLarge(
            f"{ResponseTooLarge.MARKER}: {received:,} compressed bytes inflated to more than "
            f"{decoded:,} (over {limits.max_ratio:g}:1, runner.max_compression_ratio)"
        )


class _Decoder:
    """One zlib layer that never produces more than `_STEP` bytes per step."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._zlib: Any = None if name == "deflate" else zlib.decompressobj(_DECODABLE[name])

    def decode(self, data: bytes) -> Iterator[bytes]:
        if self._zlib is None:
            # "deflate" is zlib-wrapped by the standard, raw in some servers: tell by the head.
            raw = len(data) >= 2 and (data[0] & 0x0F != 8 or (data[0] << 8 | data[1]) % 31)
            self._zlib = zlib.decompressobj(-zlib.MAX_WBITS if raw else zlib.MAX_WBITS)
        while data:
            piece = self._zlib.decompress(data, _STEP)
            data = self._zlib.unconsumed_tail
            if piece:
                yield piece
            elif not data:
                break

    def flush(self) -> bytes:
        return self._zlib.flush() if self._zlib is not None else b""


def _decode(decoders: list[_Decoder], chunk: bytes) -> Iterator[bytes]:
    if not decoders:
        if chunk:
            yield chunk
        return
    first, rest = decoders[0], decoders[1:]
    for piece in first.decode(chunk):
        yield from _decode(rest, piece)


def _flush(decoders: list[_Decoder]) -> Iterator[bytes]:
    """What the layers still hold at the body's end, outer layer first."""
    for index, decoder in enumerate(decoders):
        tail = decoder.flush()
        if tail:
            yield from _decode(decoders[index + 1 :], tail)


async def bound_response(response: Any) -> None:
    """Make an httpx (or httpx2) response decode and count its body through `bounded_body`.

    An event hook and a transport both call this after the headers arrive and before the body
    is read. The Content-Encoding header goes, so the client does not decode a second time.
    """
    lib = sys.modules[type(response).__module__.partition(".")[0]]
    encodings = [
        value.strip().lower()
        for value in response.headers.get_list("content-encoding", split_commas=True)
    ]
    if "content-encoding" in response.headers:
        del response.headers["content-encoding"]
    response.stream = _stream_type(lib)(response.stream, encodings, _LIMITS.get())


@cache
def _stream_type(lib: Any) -> type:
    """A byte-stream class of `lib` (httpx or httpx2: their responses check the base)."""

    class BoundedStream(lib.AsyncByteStream):  # type: ignore[misc]
        def __init__(self, inner: Any, encodings: list[str], limits: BodyLimits) -> None:
            self._inner = inner
            self._encodings = encodings
            self._limits = limits

        async def __aiter__(self) -> AsyncIterator[bytes]:
            async for piece in bounded_body(self._inner.__aiter__(), self._encodings, self._limits):
                yield piece

        async def aclose(self) -> None:
            await self._inner.aclose()

    return BoundedStream


def bound_litellm_transports() -> None:
    """Wrap every async transport LiteLLM builds (its one factory of them) so that its
    replies pass `bound_response`. Idempotent; called once LiteLLM is imported."""
    import httpx
    from litellm.llms.custom_httpx.http_handler import AsyncHTTPHandler

    original = AsyncHTTPHandler.create_async_transport
    if getattr(original, "bounds_bodies", False):
        return

    def create(*args: Any, **kwargs: Any) -> Any:
        transport = original(*args, **kwargs)
        if transport is None:
            # LiteLLM's "use httpx's default": made here, so that it is wrapped too.
            verify = kwargs.get("ssl_context") or kwargs.get("ssl_verify") is not False
            transport = httpx.AsyncHTTPTransport(verify=verify, cert=kwargs.get("cert"))
        return _transport_type(httpx)(transport)

    create.bounds_bodies = True  # type: ignore[attr-defined]
    AsyncHTTPHandler.create_async_transport = staticmethod(create)  # type: ignore[method-assign]
    AsyncHTTPHandler._create_async_transport = staticmethod(create)


@cache
def _transport_type(lib: Any) -> type:
    """A transport class of `lib` that passes each reply of the one it wraps through
    `bound_response`; anything else asked of it goes to the wrapped transport."""

    class BoundedTransport(lib.AsyncBaseTransport):  # type: ignore[misc]
        def __init__(self, inner: Any) -> None:
            self._inner = inner

        async def handle_async_request(self, request: Any) -> Any:
            response = await self._inner.handle_async_request(request)
            await bound_response(response)
            return response

        async def aclose(self) -> None:
            await self._inner.aclose()

        def __getattr__(self, name: str) -> Any:
            return getattr(self._inner, name)

    return BoundedTransport
