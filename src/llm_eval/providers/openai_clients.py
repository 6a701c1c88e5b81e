"""One `AsyncOpenAI` client per endpoint, shared by every model that talks to it.

A client owns a connection pool; models on one server (one base URL and key) reuse its
connections instead of opening their own. The transport is aiohttp (the SDK's
`DefaultAioHttpClient`): at 64 requests in flight it spent far less CPU per request than the
default httpx transport in `perf/provider_routes.py`. Every reply passes `bound_response`
(a response hook, so proxied and direct requests alike) before its body is read. A client is
bound to the event loop that made it, so clients are kept per loop and closed by
`close_clients` at the end of a run.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from openai import AsyncOpenAI

_Key = tuple[str, str]  # (base URL, API key)
_CLIENTS: dict[_Key, tuple[asyncio.AbstractEventLoop, AsyncOpenAI]] = {}


def shared_client(base_url: str, api_key: str) -> AsyncOpenAI:
    """The client of this endpoint in the running event loop, made on first use."""
    loop = asyncio.get_running_loop()
    made = _CLIENTS.get((base_url, api_key))
    if made is not None and made[0] is loop:
        return made[1]
    from openai import AsyncOpenAI, DefaultAioHttpClient

    from llm_eval.providers.body_limits import bound_response

    # Retries belong to the runner's policy; the SDK's own would hide attempts. A client left
    # by an earlier event loop is unusable in this one and is simply replaced.
    http = DefaultAioHttpClient(event_hooks={"response": [bound_response]})
    client = AsyncOpenAI(base_url=base_url, api_key=api_key, max_retries=0, http_client=http)
    _CLIENTS[(base_url, api_key)] = (loop, client)
    return client


async def close_clients() -> None:
    """Close the clients made in the running event loop (their connections with them)."""
    loop = asyncio.get_running_loop()
    for key in [key for key, (owner, _) in _CLIENTS.items() if owner is loop]:
        await _CLIENTS.pop(key)[1].close()
