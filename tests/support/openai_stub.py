"""A local OpenAI-compatible HTTP server for tests: real sockets, no provider, no network.

It answers `POST /v1/chat/completions` (also `/chat/completions`) and `GET /v1/models` on
127.0.0.1 with a random free port. The server runs on its own event loop in a background
thread, so sync tests, async tests and code under test that runs its own loop can all talk to
it over real HTTP. Latency is `asyncio.sleep`, so 64+ concurrent requests overlap.

Everything is deterministic: replies are a function of the request body, and whether a request
is faulted is a function of (seed, sha256 of the canonical body, how often that body has been
seen). A faulted body fails on its first `faults_per_request` attempts and then succeeds, so a
retrying client succeeds deterministically too.

    from tests.support.openai_stub import StubConfig, start_stub

    with start_stub(StubConfig(latency_s=0.1)) as stub:
        post(stub.base_url + "/chat/completions", ...)
        assert stub.total_requests == 1
"""

from __future__ import annotations

import asyncio
import dataclasses
import email.utils
import functools
import hashlib
import json
import re
import socket
import threading
import time
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

import pytest
from aiohttp import web
from multidict import CIMultiDict

Body = dict[str, Any]
AnswerFn = Callable[[Body], str]
ToolMode = Literal["call", "invalid_json", "ignore"]

HTTP_FAULTS = ("429", "500", "502", "503", "504", "400", "401", "403", "404")
FAULT_KINDS = frozenset(
    (*HTTP_FAULTS, "drop", "slow", "malformed_json", "empty_choices", "context_length",
     "gzip_bomb", "huge_body", "error_200", "error_finish", "surrogate_finish")
)  # fmt: skip
_ANSWER_MARKER = re.compile(r"\[\[answer:(.*?)\]\]", re.DOTALL)
_CREATED = 1_700_000_000  # fixed timestamp: identical requests give identical responses
_CONTEXT_WINDOW = 8192


def default_answer(body: Body) -> str:
    """`XYZ` if the last user message contains `[[answer:XYZ]]`, else "42"."""
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    if users:
        match = _ANSWER_MARKER.search(_text_of(users[-1].get("content")))
        if match:
            return match.group(1)
    return "42"


@dataclass(frozen=True, slots=True)
class StubConfig:
    """How the stub behaves; swap it at runtime with `StubServer.set_config`.

    `fault_kinds` are drawn from `FAULT_KINDS`; `retry_after` is sent verbatim as the
    `Retry-After` header of 429s (seconds, or an HTTP date from `http_date`); `slow` faults
    sleep `slow_s` before answering normally, so the client should time out first;
    `echo_api_key` puts the received `Authorization` header into error bodies, to prove the
    harness redacts keys it logs; `call_tool` names the tool the model calls instead of the
    first one offered, even when the request offers it no tools (a model going off-script).
    `gzip_bomb` answers with `bomb_bytes` of zeros gzip-compressed (about a thousandth of that
    on the wire, `Content-Encoding: gzip`); `huge_body` streams `bomb_bytes` of a JSON reply's
    content as fast as the client reads; `echo_in_reply` puts the received Authorization header
    into every string field of a reply besides its content. `usage_fn`, given the request
    body, returns the `usage` object the reply sends instead of the stub's own (None: the
    reply has no `usage`), as providers that misreport their usage do. `error_200` and
    `error_finish` are HTTP 200 replies that carry an error (alone, or after partial content);
    `surrogate_finish` is a normal reply with a lone surrogate in its finish reason.
    """

    latency_s: float = 0.0
    answer_fn: AnswerFn = default_answer
    reasoning: bool = False
    tool_mode: ToolMode = "call"
    fault_rate: float = 0.0
    fault_kinds: tuple[str, ...] = ("500",)
    faults_per_request: int = 1
    independent_faults: bool = False
    seed: int = 0
    retry_after: str | None = None
    slow_s: float = 30.0
    echo_api_key: bool = False
    call_tool: str | None = None
    models: tuple[str, ...] = ("stub-model",)
    bomb_bytes: int = 1 << 30
    echo_in_reply: bool = False
    usage_fn: Callable[[Body], Body | None] | None = None

    def __post_init__(self) -> None:
        unknown = set(self.fault_kinds) - FAULT_KINDS
        if unknown:
            raise ValueError(f"unknown fault kinds {sorted(unknown)}; known: {sorted(FAULT_KINDS)}")
        if not self.fault_kinds:
            raise ValueError("fault_kinds must not be empty")
        if not 0.0 <= self.fault_rate <= 1.0:
            raise ValueError("fault_rate must be within [0, 1]")


@dataclass(frozen=True, slots=True)
class ReceivedRequest:
    """One request as the stub saw it, and what it decided to do with it."""

    path: str
    body: Body | None
    headers: CIMultiDict[str]  # case-insensitive, as HTTP header names are
    attempt: int  # 0 for the first time this exact body arrived
    fault: str | None


def canonical_body_hash(body: Body) -> str:
    """sha256 of the body with sorted keys and no whitespace: equal requests, equal hash."""
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def fault_for(config: StubConfig, body: Body, attempt: int) -> str | None:
    """The fault the stub injects for `body` on its `attempt`-th arrival, or None.

    Pure, so tests can predict the stub: whether a body is faulted depends only on the seed
    and the body; the kind may differ between attempts, but deterministically.
    """
    if config.fault_rate <= 0.0:
        return None
    digest = canonical_body_hash(body)
    if config.independent_faults:
        # Every arrival is a fresh draw, as on a real overloaded server: a request can fail
        # any number of times in a row.
        if _unit_draw(config.seed, digest, "fault", str(attempt)) >= config.fault_rate:
            return None
    elif attempt >= config.faults_per_request or (
        _unit_draw(config.seed, digest, "fault") >= config.fault_rate
    ):
        return None
    index = int(_unit_draw(config.seed, digest, "kind", str(attempt)) * len(config.fault_kinds))
    return config.fault_kinds[index]


def http_date(seconds_from_now: float) -> str:
    """An HTTP date for `Retry-After`, e.g. 'Wed, 21 Oct 2015 07:28:00 GMT'."""
    return email.utils.formatdate(time.time() + seconds_from_now, usegmt=True)


def _unit_draw(seed: int, *parts: str) -> float:
    """A reproducible number in [0, 1) from the seed and the parts (no global RNG state)."""
    digest = hashlib.sha256(":".join((str(seed), *parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def _text_of(content: Any) -> str:
    """Text of a message content: a string or a list of OpenAI content parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def _approx_tokens(text: str) -> int:
    """About four characters per token, like the usual rule of thumb; at least one."""
    return max(1, round(len(text) / 4))


def _error_body(message: str, kind: str, code: str | None, param: str | None = None) -> Body:
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


# (status, message, type, code) for the plain HTTP error faults, worded like OpenAI's.
_HTTP_ERRORS: dict[str, tuple[int, str, str, str | None]] = {
    "429": (429, "Rate limit reached for requests", "rate_limit_error", "rate_limit_exceeded"),
    "500": (500, "The server had an error processing your request", "server_error", None),
    "502": (502, "Bad gateway", "server_error", None),
    "503": (503, "The engine is currently overloaded", "server_error", None),
    "504": (504, "Gateway timeout", "server_error", None),
    "400": (400, "Invalid request", "invalid_request_error", None),
    "401": (401, "Incorrect API key provided", "invalid_request_error", "invalid_api_key"),
    "403": (403, "You are not allowed to access this model", "permission_error", None),
    "404": (404, "The model does not exist", "invalid_request_error", "model_not_found"),
}


class StubServer:
    """The running stub: its URL, what it received, and knobs to change its behaviour."""

    def __init__(self, config: StubConfig | None = None) -> None:
        self._config = config or StubConfig()
        self._lock = threading.Lock()
        self._received: list[ReceivedRequest] = []
        self._status_counts: Counter[int] = Counter()
        self._dropped = 0
        self._in_flight = 0
        self._peak_in_flight = 0  # most chat requests held open at one moment
        self._seen: Counter[str] = Counter()  # body hash -> arrivals, drives fault_for
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))  # the kernel picks a free port
        self.port: int = self._sock.getsockname()[1]

    # -- lifecycle ---------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """OpenAI-style base URL, e.g. http://127.0.0.1:PORT/v1."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> StubServer:
        """Start serving in a background thread; return once the socket accepts requests."""
        ready = threading.Event()
        failure: list[BaseException] = []
        self._thread = threading.Thread(
            target=self._serve, args=(ready, failure), name=f"openai-stub-{self.port}", daemon=True
        )
        self._thread.start()
        if not ready.wait(timeout=10.0):
            raise RuntimeError("openai stub did not start within 10 s")
        if failure:
            raise RuntimeError("openai stub failed to start") from failure[0]
        return self

    def stop(self) -> None:
        """Stop the server and its thread; pending slow requests are cancelled."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        asyncio.run_coroutine_threadsafe(self._shutdown(), loop).result(timeout=10.0)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10.0)
        self._loop = self._thread = None

    def __enter__(self) -> StubServer:
        return self if self._thread is not None else self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _serve(self, ready: threading.Event, failure: list[BaseException]) -> None:
        """Thread body: own event loop, set up the app, run until `stop`."""
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        self._loop = loop
        try:
            loop.run_until_complete(self._startup())
        except BaseException as exc:  # reported to start(), which raises it in the caller
            failure.append(exc)
            ready.set()
            loop.close()
            return
        ready.set()
        try:
            loop.run_forever()
        finally:
            loop.close()

    async def _startup(self) -> None:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        for prefix in ("/v1", ""):
            app.router.add_post(f"{prefix}/chat/completions", self._chat)
            app.router.add_get(f"{prefix}/models", self._models)
        # handler_cancellation: a client that gives up on a slow request frees the handler;
        # a short shutdown_timeout keeps stop() fast while slow requests are pending.
        self._runner = web.AppRunner(
            app, access_log=None, handler_cancellation=True, shutdown_timeout=0.5
        )
        await self._runner.setup()
        await web.SockSite(self._runner, self._sock, backlog=1024).start()

    async def _shutdown(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    # -- configuration and counters ----------------------------------------------------------

    @property
    def config(self) -> StubConfig:
        with self._lock:
            return self._config

    def set_config(self, config: StubConfig | None = None, **changes: Any) -> StubConfig:
        """Replace the config, or change some fields of the current one; returns the new one."""
        with self._lock:
            self._config = dataclasses.replace(config or self._config, **changes)
            return self._config

    def reset(self, *, attempts: bool = True) -> None:
        """Forget received requests and counters (and, by default, per-body attempt counts)."""
        with self._lock:
            self._received.clear()
            self._status_counts.clear()
            self._dropped = 0
            self._peak_in_flight = self._in_flight
            if attempts:
                self._seen.clear()

    @property
    def received(self) -> list[ReceivedRequest]:
        with self._lock:
            return list(self._received)

    @property
    def requests(self) -> list[Body]:
        """JSON bodies of the chat requests received, in arrival order."""
        return [r.body for r in self.received if r.body is not None]

    @property
    def headers(self) -> list[CIMultiDict[str]]:
        return [r.headers for r in self.received]

    @property
    def total_requests(self) -> int:
        with self._lock:
            return len(self._received)

    @property
    def status_counts(self) -> Counter[int]:
        """Responses sent, by HTTP status (dropped connections are in `dropped`)."""
        with self._lock:
            return Counter(self._status_counts)

    @property
    def peak_in_flight(self) -> int:
        """The most chat requests the server held open at one moment (overlap, not timing)."""
        with self._lock:
            return self._peak_in_flight

    @property
    def dropped(self) -> int:
        with self._lock:
            return self._dropped

    # -- handlers ----------------------------------------------------------------------------

    async def _models(self, request: web.Request) -> web.Response:
        config = self._record(request, None)[0]
        data = [
            {"id": m, "object": "model", "created": _CREATED, "owned_by": "stub"}
            for m in config.models
        ]
        return self._respond(200, {"object": "list", "data": data})

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body = await _read_json(request)
        config, fault = self._record(request, body)
        with self._lock:
            self._in_flight += 1
            self._peak_in_flight = max(self._peak_in_flight, self._in_flight)
        try:
            await asyncio.sleep(config.latency_s)
        finally:
            with self._lock:
                self._in_flight -= 1
        if body is None:
            return self._respond(400, self._error(request, config, "Invalid JSON body", 400))
        if not _valid_messages(body.get("messages")):
            message = "'messages' must be a non-empty list of objects"
            return self._respond(400, self._error(request, config, message, 400))
        if body.get("stream"):
            return self._respond(400, self._error(request, config, "stub: no streaming", 400))
        if fault is not None:
            return await self._fault(request, config, body, fault)
        completion = _completion(config, body)
        if config.usage_fn is not None:
            _replace_usage(completion, config.usage_fn(body))
        if config.echo_in_reply:
            _echo_into(completion, request.headers.get("Authorization", ""))
        return self._respond(200, completion)

    def _record(self, request: web.Request, body: Body | None) -> tuple[StubConfig, str | None]:
        """Log the request, count its arrival and decide its fault, atomically."""
        with self._lock:
            config = self._config
            attempt = 0
            if body is not None:
                digest = canonical_body_hash(body)
                attempt = self._seen[digest]
                self._seen[digest] += 1
            fault = fault_for(config, body, attempt) if body is not None else None
            self._received.append(
                ReceivedRequest(request.path, body, CIMultiDict(request.headers), attempt, fault)
            )
            return config, fault

    def _respond(
        self, status: int, payload: Body | str, headers: dict[str, str] | None = None
    ) -> web.Response:
        """A JSON response (a str payload is sent as is: used for malformed JSON)."""
        with self._lock:
            self._status_counts[status] += 1
        text = payload if isinstance(payload, str) else json.dumps(payload)
        return web.Response(
            status=status, text=text, content_type="application/json", headers=headers
        )

    def _error(self, request: web.Request, config: StubConfig, message: str, status: int) -> Body:
        kind = "invalid_request_error" if status < 500 else "server_error"
        return _error_body(self._with_key(request, config, message), kind, None)

    @staticmethod
    def _with_key(request: web.Request, config: StubConfig, message: str) -> str:
        """Append the received Authorization header when `echo_api_key` asks for it."""
        if not config.echo_api_key:
            return message
        return f"{message} (received Authorization: {request.headers.get('Authorization')})"

    async def _fault(
        self, request: web.Request, config: StubConfig, body: Body, fault: str
    ) -> web.StreamResponse:
        """Fail this request the way `fault` says."""
        if fault in _HTTP_ERRORS:
            status, message, kind, code = _HTTP_ERRORS[fault]
            retry = fault == "429" and config.retry_after is not None
            headers = {"Retry-After": str(config.retry_after)} if retry else None
            payload = _error_body(self._with_key(request, config, message), kind, code)
            return self._respond(status, payload, headers)
        if fault == "context_length":
            return self._respond(400, self._context_length(request, config, body))
        if fault == "drop":
            return self._drop(request)
        if fault == "slow":
            await asyncio.sleep(config.slow_s)
            return self._respond(200, _completion(config, body))
        if fault == "gzip_bomb":
            headers = {"Content-Encoding": "gzip"}
            return web.Response(body=gzip_bomb(config.bomb_bytes), headers=headers,
                                content_type="application/json")  # fmt: skip
        if fault == "huge_body":
            return await self._huge_body(request, config.bomb_bytes)
        if fault == "malformed_json":
            return self._respond(200, json.dumps(_completion(config, body))[:40])
        if fault in _REPLY_FAULTS:
            return self._respond(200, _REPLY_FAULTS[fault](_completion(config, body)))
        completion = _completion(config, body)
        completion["choices"] = []  # "empty_choices"
        return self._respond(200, completion)

    @staticmethod
    async def _huge_body(request: web.Request, size: int) -> web.StreamResponse:
        """A JSON reply whose content is `size` bytes, written in 1 MiB pieces until the
        client hangs up."""
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        await response.prepare(request)
        piece = b"a" * (1 << 20)
        try:
            await response.write(b'{"choices": [{"message": {"content": "')
            for _ in range(size // len(piece)):
                await response.write(piece)
            await response.write(b'"}, "finish_reason": "stop"}]}')
            await response.write_eof()
        except (ConnectionError, RuntimeError):
            pass  # the client stopped reading: what a capped client does
        return response

    def _context_length(self, request: web.Request, config: StubConfig, body: Body) -> Body:
        """OpenAI's error body for a prompt longer than the context window."""
        tokens = max(_CONTEXT_WINDOW + 1, _prompt_tokens(body))
        message = (
            f"This model's maximum context length is {_CONTEXT_WINDOW} tokens. However, your "
            f"messages resulted in {tokens} tokens. Please reduce the length of the messages."
        )
        message = self._with_key(request, config, message)
        return _error_body(message, "invalid_request_error", "context_length_exceeded", "messages")

    def _drop(self, request: web.Request) -> web.StreamResponse:
        """Close the connection without any response bytes."""
        with self._lock:
            self._dropped += 1
        if request.transport is not None:
            request.transport.abort()
        raise asyncio.CancelledError  # the connection is gone; nothing to send


def _replace_usage(completion: Body, usage: Body | None) -> None:
    completion.pop("usage", None)
    if usage is not None:
        completion["usage"] = usage


def _error_200(completion: Body) -> Body:
    """HTTP 200 whose body is only an error object (OpenRouter's rate limit of a provider)."""
    return {"error": {"code": 429, "message": "Provider rate limited upstream (stub)",
                      "metadata": {"provider_name": "stub"}}}  # fmt: skip


def _error_finish(completion: Body) -> Body:
    """An error after generation started: partial content, `finish_reason: "error"`."""
    choice = completion["choices"][0]
    choice["message"]["content"] = "The answer is partial"
    choice["finish_reason"] = "error"
    choice["error"] = {"code": 502, "message": "Provider disconnected mid-stream (stub)"}
    return completion


def _surrogate_finish(completion: Body) -> Body:
    """A lone surrogate in `finish_reason`: valid JSON, not encodable as UTF-8."""
    completion["choices"][0]["finish_reason"] = "stop\ud83d"
    return completion


_REPLY_FAULTS: dict[str, Callable[[Body], Body]] = {
    "error_200": _error_200,
    "error_finish": _error_finish,
    "surrogate_finish": _surrogate_finish,
}
"""Faults sent as HTTP 200 with a reply a server really sends (built from the normal one)."""


@functools.cache
def gzip_bomb(size: int) -> bytes:
    """`size` zero bytes, gzip-compressed (about 1 KB per MiB); made once per size."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = bytes(1 << 20)
    parts = [packer.compress(zeros) for _ in range(size // len(zeros))]
    return b"".join([*parts, packer.flush()])


async def _read_json(request: web.Request) -> Body | None:
    """The request's JSON object, or None if it is not one."""
    try:
        body = json.loads(await request.read())
    except ValueError:
        return None
    return body if isinstance(body, dict) else None


def _valid_messages(messages: Any) -> bool:
    return (
        bool(messages) and isinstance(messages, list) and all(isinstance(m, dict) for m in messages)
    )


def _prompt_tokens(body: Body) -> int:
    text = "".join(_text_of(m.get("content")) for m in body.get("messages", []))
    return _approx_tokens(text + (json.dumps(body["tools"]) if body.get("tools") else ""))


def _completion(config: StubConfig, body: Body) -> Body:
    """A full chat.completion object for `body`."""
    message, finish_reason = _reply_message(config, body)
    content = message.get("content") or json.dumps(message.get("tool_calls", ""))
    completion_tokens = _approx_tokens(content)
    usage: Body = {"prompt_tokens": _prompt_tokens(body)}
    if config.reasoning:
        reasoning = f"The user asks a question; the answer is {content}."
        message["reasoning_content"] = reasoning
        reasoning_tokens = _approx_tokens(reasoning)
        completion_tokens += reasoning_tokens
        usage["completion_tokens_details"] = {"reasoning_tokens": reasoning_tokens}
    usage["completion_tokens"] = completion_tokens
    usage["total_tokens"] = usage["prompt_tokens"] + completion_tokens
    return {
        "id": "chatcmpl-stub-" + canonical_body_hash(body)[:24],
        "object": "chat.completion",
        "created": _CREATED,
        "model": body.get("model", config.models[0]),
        "system_fingerprint": "fp_stub",
        "choices": [
            {"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}
        ],
        "usage": usage,
    }


def _reply_message(config: StubConfig, body: Body) -> tuple[Body, str]:
    """The assistant message and finish_reason: a tool call, a tool echo, or an answer."""
    messages = body["messages"]
    tool_messages = [m for m in messages if m.get("role") == "tool"]
    if tool_messages:
        return _assistant(_text_of(tool_messages[-1].get("content")).strip()), "stop"
    tools = [t for t in body.get("tools") or [] if isinstance(t, dict)]
    if (tools or config.call_tool) and config.tool_mode != "ignore":
        name = config.call_tool or _tool_name(tools[0])
        return _tool_call(config, body, name), "tool_calls"
    content = config.answer_fn(body)
    limit = body.get("max_completion_tokens") or body.get("max_tokens")
    if isinstance(limit, int) and _approx_tokens(content) > limit:
        return _assistant(content[: 4 * limit]), "length"
    return _assistant(content), "stop"


def _echo_into(completion: Body, header: str) -> None:
    """Put `header` into every string of a reply but its content: ids, model, finish reason,
    tool call names and arguments, as a hostile server reflecting a request would."""
    completion["id"] = f"chatcmpl-{header}"
    completion["model"] = header
    completion["system_fingerprint"] = header
    choice = completion["choices"][0]
    choice["finish_reason"] = f"stop ({header})"
    for call in choice["message"].get("tool_calls") or []:
        call["id"] = f"call-{header}"
        call["function"]["name"] = f"python_exec {header}"
        call["function"]["arguments"] = json.dumps({"code": f"print({header!r})"})


def _assistant(content: str | None) -> Body:
    return {"role": "assistant", "content": content, "refusal": None}


def _tool_call(config: StubConfig, body: Body, name: str) -> Body:
    """Call tool `name` with `{"code": "print(<answer>)"}` (or broken JSON if asked)."""
    code = f"print({config.answer_fn(body)!r})"
    arguments = json.dumps({"code": code})
    if config.tool_mode == "invalid_json":
        arguments = arguments[:-2]  # cut the closing quote and brace
    message = _assistant(None)
    message["tool_calls"] = [
        {
            "id": "call_" + canonical_body_hash(body)[:24],
            "type": "function",
            "function": {"name": name, "arguments": arguments},
        }
    ]
    return message


def _tool_name(tool: Body) -> str:
    function = tool.get("function")
    return str(function.get("name", "tool")) if isinstance(function, dict) else "tool"


def start_stub(config: StubConfig | None = None, **changes: Any) -> StubServer:
    """Start a stub (config fields may be given as keywords) and return it, running.

    Use it as a context manager, or call `.stop()` when done.
    """
    base = config or StubConfig()
    return StubServer(dataclasses.replace(base, **changes) if changes else base).start()


@pytest.fixture
def openai_stub() -> Iterator[StubServer]:
    """A running stub with the default config; register with `pytest_plugins` to use it."""
    with start_stub() as stub:
        yield stub


__all__ = [
    "FAULT_KINDS",
    "ReceivedRequest",
    "StubConfig",
    "StubServer",
    "canonical_body_hash",
    "default_answer",
    "fault_for",
    "http_date",
    "openai_stub",
    "start_stub",
]
