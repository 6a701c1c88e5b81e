"""The active suite's shape as the tests expect it (SPEC 3): benchmark -> (tasks, task type)."""

from __future__ import annotations

SUITE: dict[str, tuple[int, str]] = {
    "language_understanding": (108, "single_turn"),
    "greek_messages": (365, "single_turn"),
    "sample_math": (8, "single_turn"),
    "sample_logic": (6, "single_turn"),
    "sample_multiturn": (2, "multi_turn"),
    "sample_tools": (2, "tool_calling"),
    "aimo3_reference": (10, "single_turn"),
    "aimo3_reference_multiturn": (10, "multi_turn"),
    "aimo3_reference_python_tools": (10, "tool_calling"),
}
SUITE_COUNTS: dict[str, int] = {name: count for name, (count, _) in SUITE.items()}
SUITE_TASKS = sum(SUITE_COUNTS.values())
"""521: the seed's 156 tasks and the 365 of `greek_messages`."""
SEED_BENCHMARKS = [name for name in SUITE if name != "greek_messages"]
"""The seed's eight benchmarks (156 tasks), for tests that need the whole suite's shapes but
not its size."""
