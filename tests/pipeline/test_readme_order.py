"""The README's sweep block, one line after another, on a machine with no provider keys.

Its first line (two real models) fails here, as it does for a new user without keys, and must
leave the repository as it was: a changed `params.yaml` would make the two queued experiments
of the next lines run the real models too, and fail. Then the queue lines run as written and
both experiments succeed. The copy's pipeline selects two benchmarks (those the report's
charts need) to keep it cheap.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.pipeline.test_dvc_pipeline import copy_pipeline, dvc, git, pipeline_env, wait_for_queue
from tests.pipeline.test_readme_commands import uv_shim

pytestmark = pytest.mark.slow

MARKER = "<!-- in order: tests/pipeline/test_readme_order.py"
KEYS = ("OPENROUTER_API_KEY", "DEEPSEEK_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY")


def sweep_lines() -> list[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    (block,) = re.findall(re.escape(MARKER) + r"[^\n]*-->\n```bash\n(.*?)```", text, flags=re.S)
    return [line for line in block.splitlines() if line.strip()]


def run_line(line: str, repo: Path, shim: Path) -> tuple[int, str]:
    """One README line through bash; output to a file (queue workers keep pipes open)."""
    env = {k: v for k, v in pipeline_env().items() if k not in KEYS}
    env["PATH"] = f"{shim}{os.pathsep}{env['PATH']}"
    log = repo.parent / "line.log"
    with log.open("w") as handle:
        done = subprocess.run(["bash", "-c", line], cwd=repo, env=env, stdin=subprocess.DEVNULL,
                              stdout=handle, stderr=subprocess.STDOUT, timeout=1800)  # fmt: skip
    return done.returncode, log.read_text(encoding="utf-8", errors="replace")


def test_the_sweep_block_in_order_leaves_no_trap(tmp_path: Path) -> None:
    lines = sweep_lines()
    assert lines[0].startswith("uv run dvc exp run --temp -S 'run.models=[")
    shim = uv_shim(tmp_path / "bin")
    repo = copy_pipeline(tmp_path / "llm-eval")
    params = repo / "params.yaml"
    text = params.read_text(encoding="utf-8")
    params.write_text(
        text.replace("benchmarks: []", "benchmarks: [language_understanding, aimo3_reference]"),
        "utf-8",
    )
    git(repo, "commit", "-q", "-am", "one benchmark")

    code, output = run_line(lines[0], repo, shim)
    assert code != 0, f"the real models ran without keys?\n{output}"
    assert git(repo, "status", "--porcelain") == "", "a failed sweep changed the repository"

    try:
        for line in lines[1:]:
            code, output = run_line(line, repo, shim)
            assert code == 0, f"{line}\n{output}"
        wait_for_queue(repo)
    finally:
        dvc(repo, "queue", "stop", check=False)
    status = dvc(repo, "queue", "status")
    assert status.count("Success") == 2, status
    assert git(repo, "status", "--porcelain") == ""
