"""The harness's own modules compiled to bytecode before anything is timed.

Python writes a module's bytecode on its first import and reads it from then on, so an
installed harness starts from bytecode in daily use. Where `PYTHONDONTWRITEBYTECODE` is set
(these machines set it), nothing is ever written and every `llm-eval` process would compile
its ~100 modules from source again: about 0.1 s of CPU per process that no user pays and
that the bare loops it is compared with (site-packages, compiled by `uv sync
--compile-bytecode`) never pay either. `compileall` writes the bytecode once, as a first
import would.
"""

from __future__ import annotations

import compileall
from pathlib import Path

SOURCE = Path(__file__).resolve().parent.parent / "src"


def compile_harness() -> None:
    """Write the bytecode of every module under `src/` (a no-op when it is current)."""
    if not compileall.compile_dir(SOURCE, quiet=1):
        raise SystemExit(f"compiling {SOURCE} failed")
