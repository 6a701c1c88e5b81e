"""Which tests a plain `pytest` runs: the fast suite, with the slow end-to-end tests left out.

`uv run pytest -q` with no paths and no `-m` deselects the tests marked `slow` or `llama`, so
the default command stays short on a busy 2-core machine. Anything more explicit wins: `-m`
(CI runs `-m "not slow and not llama"` and then `-m "slow or llama"`), or a file or test named
on the command line, which runs as named, its slow tests included. Deselecting only when no
path was named means `pytest tests/x.py::test_slow` never ends in "no tests ran" (exit 5).
"""

from __future__ import annotations

import pytest

SLOW_MARKERS = ("slow", "llama")


def deselect_slow_by_default(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Drop slow and llama tests from `items` when the run names no path and no `-m`."""
    if config.option.markexpr or config.args_source is not pytest.Config.ArgsSource.TESTPATHS:
        return
    slow, kept = [], []
    for item in items:
        is_slow = any(item.get_closest_marker(marker) for marker in SLOW_MARKERS)
        (slow if is_slow else kept).append(item)
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = kept
