"""Both routes write, for the same stub replies, the rows recorded in a golden trace.

`tests/runner/data/route_golden.json` holds, for each route, the rows of the seed suite run
against the stub (reasoning, tool calls, transient and permanent faults) without their timing
and run id, error messages included, and digests of the request bodies the stub
received. It was made
before the direct route left the openai SDK for a plain aiohttp post; a change of transport
that alters any row, verdict, error message or request shows here.

Regenerate it (only for an intended change of rows) with
`uv run python -m tests.runner.test_route_golden`.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from llm_eval.config.loading import load_config
from llm_eval.runner.runner import EvaluationRunner
from llm_eval.runner.trace_io import read_rows
from llm_eval.schemas import TraceRow
from tests.support.openai_stub import StubServer, start_stub
from tests.support.suite import SEED_BENCHMARKS

GOLDEN = Path(__file__).parent / "data" / "route_golden.json"
SECRET = "sk-stub-secret-0123456789abcdefXYZ"
ROUTES = ("openai_compatible", "litellm")
FAULTS = ("429", "500", "503", "drop", "malformed_json", "empty_choices", "401", "404",
          "context_length")  # fmt: skip
TIMING = {"run_id", "latency_s", "started_at", "finished_at"}
ADDED_SINCE_GOLDEN = {"from_cache"}
"""Row fields added after the golden trace was recorded (a cache replay's mark: always
False here, where no run reads a cache)."""
CALL_TIMING = {"latency_s", "queue_s", "started_at"}
MARK = "\n  # route under test\n"

pytestmark = pytest.mark.slow  # real stub servers, two routes over the seed suite


def stub_entry(stub: StubServer, provider: str) -> str:
    return f"""
  stub:
    provider: {provider}
    model: openai/stub-model
    api_base: {stub.base_url}
    api_key_env: STUB_API_KEY
    label: Local stub
    temperature: 0.0
    input_cost_per_mtok: 0.5
    output_cost_per_mtok: 1.5
    extra_params:
      extra_headers:
        X-Team: evals
"""


def timeless(row: TraceRow, base_url: str) -> dict[str, Any]:
    """The row without what differs from run to run: timing, the run id, the stub's port."""
    data = row.model_dump(mode="json", exclude=TIMING | ADDED_SINCE_GOLDEN)
    for call in data["calls"]:
        for key in CALL_TIMING:
            call.pop(key)
    for call in data["tool_calls"]:
        call.pop("duration_s")
        call.pop("budget_wait_s")
    return json.loads(json.dumps(data).replace(base_url, "http://STUB/v1"))


def route_rows(root: Path, stub: StubServer, provider: str, output: Path) -> dict[str, Any]:
    """The seed suite on `provider`: its rows (sorted by key) and digests of the bodies it
    sent (sha256 of each body's JSON with sorted keys)."""
    models = root / "configs" / "models.yaml"
    original = models.read_text(encoding="utf-8").split(MARK)[0]
    models.write_text(original + MARK + stub_entry(stub, provider), encoding="utf-8")
    config = load_config(root)
    settings = {"backoff_base_s": 0.0, "backoff_max_s": 0.0, "global_limit": 32,
                "per_model_limit": 32, "request_timeout_s": 5.0}  # fmt: skip
    config.runner = config.runner.model_copy(update=settings)
    stub.reset()
    stub.set_config(fault_rate=0.25, fault_kinds=FAULTS, retry_after="0", seed=9)
    runner = EvaluationRunner(config, ["stub"], SEED_BENCHMARKS, output, use_cache=False)
    asyncio.run(runner.run())
    rows = sorted(read_rows(output), key=lambda row: repr(row.key))
    bodies = sorted(
        hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
        for body in stub.requests
    )
    return {"rows": [timeless(row, stub.base_url) for row in rows], "requests": bodies}


def golden_run(root: Path, scratch: Path) -> dict[str, Any]:
    os.environ["STUB_API_KEY"] = SECRET
    os.environ["LLM_EVAL_TRACKING"] = "0"
    with start_stub(reasoning=True) as stub:
        return {
            provider: route_rows(root, stub, provider, scratch / f"{provider}.jsonl")
            for provider in ROUTES
        }


@pytest.mark.parametrize("provider", ROUTES)
def test_a_route_writes_the_golden_rows(
    provider: str, config_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STUB_API_KEY", SECRET)
    monkeypatch.setenv("LLM_EVAL_TRACKING", "0")
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))[provider]
    with start_stub(reasoning=True) as stub:
        got = route_rows(config_copy, stub, provider, tmp_path / "trace.jsonl")
    assert len(got["rows"]) == len(golden["rows"]) == 156
    for expected, row in zip(golden["rows"], got["rows"], strict=True):
        assert row == expected, (row["benchmark"], row["task_id"])
    assert got["requests"] == golden["requests"]
    # The golden run holds what it is meant to: several error kinds, retries, tool calls.
    kinds = {row["error"]["kind"] for row in golden["rows"] if row["error"]}
    assert len(kinds) >= 3 and any(row["tool_calls"] for row in golden["rows"])


if __name__ == "__main__":
    import shutil
    import tempfile

    from tests.conftest import REPO

    with tempfile.TemporaryDirectory() as tmp:
        suite = Path(tmp) / "suite"
        suite.mkdir()
        shutil.copy(REPO / "params.yaml", suite / "params.yaml")
        shutil.copytree(REPO / "configs", suite / "configs")
        shutil.copytree(REPO / "data", suite / "data")
        result = golden_run(suite, Path(tmp))
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_text(json.dumps(result, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {GOLDEN}: " + ", ".join(f"{p} {len(r['rows'])} rows" for p, r in result.items()))
