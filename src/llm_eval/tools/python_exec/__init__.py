"""The `python_exec` tool: model-written Python in a bubblewrap sandbox, one per call.

A call sees an allow-list only (see `command`): the system's `/usr`, the interpreter and the
virtualenv's site-packages read-only, a private size-capped work directory, `/tmp` and
`/dev/shm`, fresh `/proc` and `/dev`; no network, no namespaces of its own. `cgroups` gives a
call one memory and process budget where the machine allows, `limits` the rlimits set inside,
`capture` bounds the output, `host_user` makes the call an unprivileged host user with its
own keyring, `budget` bounds the memory of all calls at once, `supervisor` ties them
together and `bootstrap` runs inside.
"""

from llm_eval.tools.python_exec.budget import MemoryBudget, shared_budget
from llm_eval.tools.python_exec.command import SandboxUnavailableError
from llm_eval.tools.python_exec.limits import PythonExecLimits
from llm_eval.tools.python_exec.result import PythonExecResult
from llm_eval.tools.python_exec.supervisor import run_python
from llm_eval.tools.python_exec.tool import PythonExecConfig

__all__ = [
    "MemoryBudget",
    "PythonExecConfig",
    "PythonExecLimits",
    "PythonExecResult",
    "SandboxUnavailableError",
    "run_python",
    "shared_budget",
]
