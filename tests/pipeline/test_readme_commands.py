"""The README's DVC and sharing blocks, run as written in a temporary clone.

Each block marked `<!-- verbatim: tests/pipeline/test_readme_commands.py ... -->` runs line by
line through bash in a copy of the pipeline that sits in a folder named like the repository.
`uv run X` is served by this test's environment (a `uv` shim on PATH runs X from it), so the
lines stay verbatim without building a second environment. Then a fresh clone's `dvc repro`,
with no `dvc pull`, must leave `git status` clean: simulated runs give the same bytes.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO
from tests.pipeline.test_dvc_pipeline import copy_pipeline, dvc, git, pipeline_env, sh

pytestmark = pytest.mark.slow

MARKER = "<!-- verbatim: tests/pipeline/test_readme_commands.py"


def verbatim_blocks() -> list[str]:
    """The bash blocks the README marks as run by this test, in order."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    pattern = re.escape(MARKER) + r"[^\n]*-->\n```bash\n(.*?)```"
    return re.findall(pattern, text, flags=re.S)


def uv_shim(folder: Path) -> Path:
    """A `uv` that runs `uv run X ...` as X from this environment (dvc as `python -m dvc`)."""
    folder.mkdir()
    shim = folder / "uv"
    shim.write_text(
        "#!/usr/bin/env bash\n"
        '[ "$1" = run ] || { echo "uv shim: only uv run" >&2; exit 2; }\n'
        "shift\n"
        f'[ "$1" = dvc ] && {{ shift; exec "{sys.executable}" -m dvc "$@"; }}\n'
        'exec "$@"\n'
    )
    shim.chmod(0o755)
    return folder


def run_block(block: str, cwd: Path, shim: Path) -> str:
    env = pipeline_env()
    env["PATH"] = f"{shim}{os.pathsep}{env['PATH']}"
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=2400,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"README block failed:\n{block}\n--- output ---\n{output}"
    return output


def test_readme_dvc_and_sharing_blocks_run_as_written(tmp_path: Path) -> None:
    experiments, sharing = verbatim_blocks()
    assert "dvc exp run -S 'configs/models.yaml:models.mock-flaky.seed=3'" in experiments
    assert "dvc pull" in sharing
    shim = uv_shim(tmp_path / "bin")
    repo = copy_pipeline(tmp_path / "llm-eval")
    # As in the repository itself, HEAD holds the published results the block compares with.
    dvc(repo, "repro")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "published results")

    output = run_block(experiments, repo, shim)
    # The example experiment moves a headline metric: `metrics diff` prints its change.
    assert re.search(r"mock-flaky\.strict_accuracy\s+\S+\s+\S+\s+-?\d", output), output
    assert "models.mock-flaky.seed" in output  # exp show --only-changed shows the change
    assert "deepseek" not in output, "exp show --drop/--keep lists a model the run skips"

    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "results")
    run_block(sharing, repo, shim)
    assert (tmp_path / "llm-eval-dvc-storage").is_dir(), "the clone's remote is named after it"
    (copy,) = tmp_path.glob("llm-eval-copy-*")
    for model in ("mock-varied", "mock-flaky"):
        trace = f"results/traces/{model}.jsonl"
        assert (copy / trace).read_bytes() == (repo / trace).read_bytes()


def test_two_clones_in_one_folder_share_neither_copy_nor_remote(tmp_path: Path) -> None:
    """The sharing block twice in each of two clones side by side: every path is new."""
    _, sharing = verbatim_blocks()
    shim = uv_shim(tmp_path / "bin")
    first = copy_pipeline(tmp_path / "llm-eval")
    # Published results to push, from two benchmarks (the block needs data, not volume; the
    # report draws its language and AIMO3 charts from these two).
    params = first / "params.yaml"
    text = params.read_text(encoding="utf-8")
    params.write_text(
        text.replace("benchmarks: []", "benchmarks: [language_understanding, aimo3_reference]"),
        "utf-8",
    )
    dvc(first, "repro")
    git(first, "add", "-A")
    git(first, "commit", "-q", "-m", "published results")
    second = tmp_path / "llm-eval-2"
    sh(tmp_path, "git", "clone", "-q", str(first), str(second))
    dvc(second, "repro")  # its own cache, the same bytes
    for clone in (first, second, first):
        run_block(sharing, clone, shim)
    assert sorted(p.name for p in tmp_path.glob("*-dvc-storage")) == [
        "llm-eval-2-dvc-storage",
        "llm-eval-dvc-storage",
    ]
    assert len(list(tmp_path.glob("llm-eval-copy-*"))) == 2  # a rerun made a new copy
    assert len(list(tmp_path.glob("llm-eval-2-copy-*"))) == 1
    for clone in (first, second):
        assert "dvc-storage" not in (clone / ".dvc/config").read_text(encoding="utf-8")


def shown_models(repo: Path, *options: str) -> list[set[str]]:
    """Per row of `dvc exp show --json` (workspace, then the baseline commit), the model names
    whose settings any of its params files shows."""
    shown = json.loads(dvc(repo, "exp", "show", "--json", *options))
    rows = [shown[0], *shown[1:2]]
    return [
        {
            name
            for params in row["data"]["params"].values()
            for name in params["data"].get("models", {})
        }
        for row in rows
    ]


def test_exp_show_lists_the_selected_models_settings_only(tmp_path: Path) -> None:
    """Plain `exp show` and `--param-deps`, workspace and baseline rows: only the models of
    `run.models`, although configs/models.yaml defines eight."""
    repo = copy_pipeline(tmp_path / "llm-eval")
    catalog = yaml.safe_load((repo / "configs/models.yaml").read_text(encoding="utf-8"))
    assert len(catalog["models"]) > 2
    for options in ((), ("--param-deps",)):
        rows = shown_models(repo, *options)
        assert len(rows) == 2, options
        assert all(row == {"mock-varied", "mock-flaky"} for row in rows), (options, rows)


def test_a_fresh_clone_stays_clean_after_repro(tmp_path: Path) -> None:
    repo = copy_pipeline(tmp_path / "origin")
    sh(repo, sys.executable, "-m", "dvc", "repro")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "results")
    clone = tmp_path / "clone"
    sh(tmp_path, "git", "clone", "-q", str(repo), str(clone))
    assert not (clone / "results/traces/mock-varied.jsonl").exists()
    sh(clone, sys.executable, "-m", "dvc", "repro")  # reruns the models: outputs are missing
    assert git(clone, "status", "--porcelain") == ""
