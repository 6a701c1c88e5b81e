"""Where bwrap cannot run, tool tasks end as error rows: model code never runs unsandboxed."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from llm_eval.config.loading import load_config
from llm_eval.runner.runner import EvaluationRunner
from llm_eval.runner.trace_io import read_rows
from llm_eval.tools.python_exec import command


def test_tool_tasks_become_error_rows_naming_the_sandbox(
    config_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    refusing = tmp_path / "bwrap"
    refusing.write_text(
        "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n"
    )
    refusing.chmod(0o755)
    monkeypatch.setattr(command, "bwrap_path", lambda: str(refusing))
    out = tmp_path / "t.jsonl"
    runner = EvaluationRunner(
        load_config(config_copy), ["mock-varied"], ["sample_tools"], out, use_cache=False
    )
    asyncio.run(runner.run())
    rows = read_rows(out)
    assert len(rows) == 2 and {row.status for row in rows} == {"error"}
    for row in rows:
        assert row.error is not None and row.score is None
        assert row.error.message.endswith(
            "python_exec cannot build its bwrap sandbox on this machine: "
            "bwrap: setting up uid map: Permission denied"
        ), row.error.message
