"""`python_exec` as a registered tool: its schema, its settings (the sandbox's limits) and
the function that runs one call."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field, ValidationInfo, field_validator

from llm_eval.schemas import ToolConfig
from llm_eval.tools.python_exec.budget import default_memory_budget_mb, shared_budget
from llm_eval.tools.registry import ToolOutcome, register_tool

PYTHON_EXEC_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "python_exec",
        "description": (
            "Run a Python 3 program and return what it prints. State does not persist "
            "between calls; print every value you need. No network, no input."
        ),
        "parameters": {
            "type": "object",
            "properties": {"code": {"type": "string", "description": "The program to run."}},
            "required": ["code"],
        },
    },
}


class PythonExecConfig(ToolConfig):
    """`python_exec`'s entry in `configs/tools.yaml`: the limits of each call's sandbox."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    timeout_s: float = Field(10.0, gt=0)
    cpu_seconds: int = Field(10, gt=0)
    memory_mb: int = Field(1024, gt=0)
    max_processes: int = Field(64, gt=0)
    file_size_mb: int = Field(16, gt=0)
    open_files: int = Field(64, gt=0)
    output_bytes: int = Field(65536, gt=0)
    tmpfs_mb: int | None = Field(
        None, gt=0, description="Size of each of the call's work directory, /tmp, /dev/shm (MB)."
    )
    memory_budget_mb: int | None = Field(
        None,
        gt=0,
        validate_default=True,
        description="MB all calls in flight may reserve together, each its memory_mb; a call "
        "waits for room. None: half of this machine's memory.",
    )

    @field_validator("memory_budget_mb")
    @classmethod
    def _budget_fits_one_call(cls, value: int | None, info: ValidationInfo) -> int | None:
        memory_mb = info.data.get("memory_mb")
        budget = value if value is not None else default_memory_budget_mb()
        if isinstance(memory_mb, int) and memory_mb > budget:
            source = "" if value is not None else ", by default half of this machine's memory"
            raise ValueError(
                f"memory_budget_mb ({budget} MB{source}) is less than memory_mb ({memory_mb} "
                "MB): no call could ever start; raise memory_budget_mb or lower memory_mb"
            )
        return value

    def summary(self) -> str:
        budget = self.memory_budget_mb or default_memory_budget_mb()
        source = "" if self.memory_budget_mb else " (half the RAM)"
        return (
            f"timeout_s {self.timeout_s}, memory_mb {self.memory_mb}, "
            f"memory_budget_mb {budget}{source}"
        )


@register_tool("python_exec", PYTHON_EXEC_SCHEMA, settings=PythonExecConfig)
async def run_python_exec(arguments: dict[str, Any], settings: ToolConfig) -> ToolOutcome:
    """Run the call's `code` in a fresh sandbox under the configured limits."""
    from llm_eval.tools.python_exec.limits import PythonExecLimits
    from llm_eval.tools.python_exec.supervisor import run_python

    assert isinstance(settings, PythonExecConfig)  # the registry gives each tool its settings
    code = arguments.get("code")
    if not isinstance(code, str) or not code.strip():
        return ToolOutcome("error: `code` must be a non-empty string")
    limits = PythonExecLimits(
        timeout_s=settings.timeout_s,
        cpu_seconds=settings.cpu_seconds,
        memory_mb=settings.memory_mb,
        max_processes=settings.max_processes,
        file_size_mb=settings.file_size_mb,
        open_files=settings.open_files,
        output_bytes=settings.output_bytes,
        tmpfs_mb=settings.tmpfs_mb,
    )
    result = await run_python(code, limits, shared_budget(settings.memory_budget_mb))
    return ToolOutcome(
        result.to_tool_content(), tuple(result.isolation), round(result.budget_wait_s, 4)
    )
