"""A reply body cannot exhaust the harness: it is decoded in bounded steps and capped.

The end-to-end tests run `llm-eval run` in a subprocess against a real stub server that sends a
gzip bomb (1 GiB of zeros in about 1 MB) or a 1 GiB body as fast as it is read, on both routes,
and read the subprocess's own peak RSS back (VmHWM).
"""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import subprocess
import sys
import zlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from llm_eval.errors import ProviderError
from llm_eval.providers.body_limits import BodyLimits, ResponseTooLarge, bounded_body
from llm_eval.runner.trace_io import read_rows
from tests.conftest import REPO
from tests.support.catalog import add_models
from tests.support.openai_stub import start_stub

REPLY = json.dumps({"choices": [{"message": {"content": "Final answer: 42 " * 500}}]}).encode()


async def _chunks(data: bytes, size: int = 1000) -> AsyncIterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


def _decode(data: bytes, encodings: list[str], limits: BodyLimits | None = None) -> bytes:
    async def collect() -> bytes:
        body = bounded_body(_chunks(data), encodings, limits or BodyLimits())
        return b"".join([piece async for piece in body])

    return asyncio.run(collect())


def _deflate(data: bytes, wbits: int) -> bytes:
    packer = zlib.compressobj(6, zlib.DEFLATED, wbits)
    return packer.compress(data) + packer.flush()


def test_an_ordinary_compressed_reply_decodes_unchanged() -> None:
    assert _decode(REPLY, []) == REPLY
    assert _decode(gzip.compress(REPLY), ["gzip"]) == REPLY
    assert _decode(_deflate(REPLY, zlib.MAX_WBITS), ["deflate"]) == REPLY  # zlib-wrapped
    assert _decode(_deflate(REPLY, -zlib.MAX_WBITS), ["deflate"]) == REPLY  # raw, as some send
    assert _decode(gzip.compress(gzip.compress(REPLY)), ["gzip", "gzip"]) == REPLY
    assert _decode(REPLY, ["br"]) == REPLY  # undecodable encodings pass through, as in httpx


def test_a_body_past_the_cap_fails_plain_or_compressed() -> None:
    text = os.urandom(3 << 20)  # incompressible: only the absolute cap can stop it
    with pytest.raises(ResponseTooLarge, match=r"more than 2,097,152 bytes decoded"):
        _decode(text, [], BodyLimits(max_bytes=2 << 20))
    with pytest.raises(ResponseTooLarge, match=r"more than 2,097,152 bytes decoded"):
        _decode(gzip.compress(text), ["gzip"], BodyLimits(max_bytes=2 << 20))


def test_a_body_inflating_past_the_ratio_fails_before_the_cap() -> None:
    bomb = gzip.compress(bytes(64 << 20))
    with pytest.raises(ResponseTooLarge, match=r"inflated to more than .* \(over 100:1"):
        _decode(bomb, ["gzip"])
    # Under the 1 MiB floor a repetitive reply of any ratio is kept.
    small = bytes(512 << 10)
    assert _decode(gzip.compress(small), ["gzip"]) == small


def test_the_limits_are_validated_runner_settings(config_copy: Path) -> None:
    from llm_eval.cli.run import apply_runner_overrides
    from llm_eval.config.loading import load_config
    from llm_eval.errors import UsageError

    runner = load_config(config_copy).runner
    assert (runner.max_response_bytes, runner.max_compression_ratio) == (16 << 20, 100.0)
    with pytest.raises(UsageError, match="--max-response-bytes: Input should be greater"):
        apply_runner_overrides(runner, {"max_response_bytes": 10})
    assert apply_runner_overrides(runner, {"max_response_bytes": 1 << 20}).max_response_bytes == (
        1 << 20
    )


# The peak is VmHWM, this process's own memory's high-water mark: `ru_maxrss` is not, since
# Linux folds the forking parent's resident size into it at exec (a large pytest process
# would make every child look as large).
_PEAK = """
import runpy, sys
sys.argv = ["llm-eval", *sys.argv[1:]]
try:
    runpy.run_module("llm_eval.cli", run_name="__main__")
except SystemExit as stop:
    code = stop.code
with open("/proc/self/status") as status:
    peak = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
print("PEAK_KB", peak, file=sys.stderr)
sys.exit(code)
"""


@pytest.mark.slow
@pytest.mark.parametrize("route", ["openai_compatible", "litellm"])
@pytest.mark.parametrize("fault", ["gzip_bomb", "huge_body"])
def test_a_bomb_is_one_error_row_and_the_harness_stays_small(
    config_copy: Path, tmp_path: Path, route: str, fault: str
) -> None:
    trace = tmp_path / "t.jsonl"
    with start_stub(fault_rate=1.0, fault_kinds=(fault,), faults_per_request=100) as stub:
        model = {"provider": route, "model": "openai/stub-model", "api_base": stub.base_url}
        add_models(config_copy, {"hostile": model})
        args = [
            "run",
            "--model",
            "hostile",
            "--benchmark",
            "sample_math",
            "--limit",
            "1",
            "--no-cache",
            "--output",
            str(trace),
            "--config-root",
            str(config_copy),
        ]
        env = {**os.environ, "LLM_EVAL_TRACKING": "0"}  # fmt: skip
        result = subprocess.run(
            [sys.executable, "-c", _PEAK, *args],
            cwd=REPO, env=env, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert stub.total_requests == 1  # never retried
    (row,) = read_rows(trace)
    assert row.error is not None, result.stderr[-2000:]
    assert (row.status, row.error.kind, row.attempts) == ("error", "response_too_large", 1)
    assert "reply body too large" in row.error.message
    peak_mb = int(result.stderr.rsplit("PEAK_KB", 1)[1].split()[0]) / 1024
    assert peak_mb < 600, f"peak RSS {peak_mb:.0f} MB"


def test_the_error_is_permanent() -> None:
    from llm_eval.providers.litellm_client import classify_exception
    from llm_eval.providers.openai_compatible import OpenAICompatibleProvider
    from llm_eval.schemas import ModelConfig

    direct = OpenAICompatibleProvider(
        ModelConfig(provider="openai_compatible", model="openai/m", api_base="http://h:1/v1")
    )
    too_large = ResponseTooLarge("reply body too large: more than 5 bytes decoded")
    try:
        try:
            raise too_large
        except ResponseTooLarge as cause:
            raise RuntimeError("Connection error.") from cause
    except RuntimeError as wrapped:  # LiteLLM re-raises it in its own types
        errors: list[ProviderError] = [classify_exception(wrapped), direct._failure(too_large)]
    for error in errors:
        assert (error.kind, error.transient) == ("response_too_large", False)
