"""Shared fixtures: a copy of the repository's config tree to break or to run in."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.selection import deselect_slow_by_default

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture()
def config_copy(tmp_path: Path) -> Path:
    """A private copy of params.yaml, configs/ and data/ that a test may edit."""
    root = tmp_path / "suite"
    root.mkdir()
    shutil.copy(REPO / "params.yaml", root / "params.yaml")
    shutil.copytree(REPO / "configs", root / "configs")
    shutil.copytree(REPO / "data", root / "data")
    return root


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    deselect_slow_by_default(config, items)
