"""`pytest` with no arguments runs the fast tests; `-m` or a named path runs what it names.

Each case runs a real pytest in a small project that uses the repository's selection hook,
so the exit codes are pytest's own (5 is "no tests ran").
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

TESTS = """
import pytest

def test_fast():
    pass

@pytest.mark.slow
def test_slow():
    pass

@pytest.mark.llama
def test_llama():
    pass
"""


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\ntestpaths = ["checks"]\n'
        'markers = ["slow: slow", "llama: llama"]\n',
        encoding="utf-8",
    )
    checks = tmp_path / "checks"
    checks.mkdir()
    (checks / "conftest.py").write_text(
        "from tests.support.selection import deselect_slow_by_default\n\n"
        "def pytest_collection_modifyitems(config, items):\n"
        "    deselect_slow_by_default(config, items)\n",
        encoding="utf-8",
    )
    (checks / "test_sample.py").write_text(TESTS, encoding="utf-8")
    return tmp_path


def pytest_in(project: Path, *args: str) -> tuple[int, str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=project, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    return done.returncode, done.stdout + done.stderr


def test_no_arguments_runs_only_the_fast_tests(project: Path) -> None:
    code, output = pytest_in(project)
    assert code == 0, output
    assert "1 passed, 2 deselected" in output


def test_a_marker_expression_selects_as_written(project: Path) -> None:
    code, output = pytest_in(project, "-m", "slow or llama")
    assert code == 0, output
    assert "2 passed, 1 deselected" in output
    code, output = pytest_in(project, "-m", "not slow and not llama")
    assert code == 0 and "1 passed, 2 deselected" in output, output


def test_a_named_slow_test_runs_instead_of_exiting_5(project: Path) -> None:
    code, output = pytest_in(project, "checks/test_sample.py::test_slow")
    assert code == 0, output
    assert "1 passed" in output
    code, output = pytest_in(project, "checks")
    assert code == 0 and "3 passed" in output, output


def test_a_selection_that_matches_nothing_exits_5(project: Path) -> None:
    code, output = pytest_in(project, "-m", "no_such_marker")
    assert code == 5, output
