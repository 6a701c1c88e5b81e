"""Runs inside the sandbox (as `python -c`, so it imports nothing of this package).

argv: the rlimits as JSON `[[name, soft, hard], ...]`, then the code file. It sets the
rlimits (hard ones too, and the sandbox has no capability to raise them again), then runs
the file as `__main__` with tracebacks free of its own frames.
"""

import builtins
import json
import os
import resource
import sys
import traceback
import types


def set_rlimits(rlimits: list[list[object]]) -> None:
    """Set each limit; a limit the kernel refuses is an error, not a silent pass."""
    for name, soft, hard in rlimits:
        resource.setrlimit(getattr(resource, str(name)), (int(str(soft)), int(str(hard))))


def run_code(code_path: str) -> None:
    """Run the model's file as `__main__`, as `python main.py` would."""
    # Line buffering, so output printed before a timeout kill still reaches the harness.
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(line_buffering=True)
    sys.argv = [code_path]
    sys.path.insert(0, os.path.dirname(code_path))
    main = types.ModuleType("__main__")
    main.__file__ = code_path
    main.__builtins__ = builtins  # type: ignore[attr-defined]
    sys.modules["__main__"] = main
    try:
        with open(code_path, encoding="utf-8") as source:
            compiled = compile(source.read(), code_path, "exec")
        exec(compiled, main.__dict__)
    except SystemExit:
        raise
    except BaseException as exc:
        tb = exc.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != code_path:
            tb = tb.tb_next
        traceback.print_exception(type(exc), exc, tb)
        raise SystemExit(1) from None


if __name__ == "__main__":
    set_rlimits(json.loads(sys.argv[1]))
    run_code(sys.argv[2])
