"""docs/experiments.md's recipe for rerunning wrong rows in the pipeline, run as written in a
temporary git copy: the rerun trace is the output of a stage whose command writes it, so
`dvc status` is clean afterwards and the `run` stage's own trace is left as it was."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from llm_eval.runner.trace_io import read_rows
from tests.conftest import REPO
from tests.pipeline.test_dvc_pipeline import copy_pipeline, dvc, git
from tests.pipeline.test_readme_commands import run_block, uv_shim

pytestmark = pytest.mark.slow

HEADING = "## Rerunning wrong rows in the pipeline\n"


def recipe_block() -> str:
    """The first bash block under the recipe's heading."""
    text = (REPO / "docs" / "experiments.md").read_text(encoding="utf-8")
    section = text.split(HEADING, 1)[1].split("\n## ", 1)[0]
    return section.split("```bash\n", 1)[1].split("```", 1)[0]


def test_the_rerun_recipe_writes_its_trace_through_its_own_stage(tmp_path: Path) -> None:
    shim = uv_shim(tmp_path / "bin")
    repo = copy_pipeline(tmp_path / "llm-eval")
    params = repo / "params.yaml"  # two benchmarks: the recipe needs wrong rows, not volume
    text = params.read_text(encoding="utf-8")
    params.write_text(
        text.replace("benchmarks: []", "benchmarks: [language_understanding, aimo3_reference]")
    )
    dvc(repo, "repro")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "published results")
    trace = repo / "results" / "traces" / "mock-flaky.jsonl"
    before = trace.read_bytes()
    wrong = [
        r for r in read_rows(repo / "results/scored/mock-flaky.jsonl") if r.status == "incorrect"
    ]
    assert wrong, "mock-flaky has wrong rows to rerun"

    output = run_block(recipe_block(), repo, shim)

    assert f"rerunning {len(wrong)} wrong row(s) of results/scored/mock-flaky.jsonl" in output
    rerun = read_rows(repo / "results" / "reruns" / "mock-flaky.jsonl")
    assert sorted(r.key for r in rerun) == sorted(r.key for r in read_rows(trace))
    assert trace.read_bytes() == before  # the `run` stage's output is untouched
    assert (repo / "results" / "reruns" / "scored" / "mock-flaky.jsonl").is_file()
    lock = yaml.safe_load((repo / "dvc.lock").read_text(encoding="utf-8"))["stages"]
    assert {"rerun-mock-flaky", "rescore-mock-flaky"} <= set(lock)
    assert "up to date" in dvc(repo, "status")  # every output is what its stage wrote
