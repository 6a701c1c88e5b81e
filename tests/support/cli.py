"""Run the real `llm-eval` command line in a subprocess, as a user would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO


def llm_eval(*args: str, cwd: Path = REPO, env: dict[str, str] | None = None, timeout: float = 300):
    """Run `llm-eval ARGS` with this interpreter; tracking off unless a test turns it on."""
    full_env = {**os.environ, "LLM_EVAL_TRACKING": "0", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "llm_eval.cli", *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
