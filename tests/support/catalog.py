"""Adding models to a test's private copy of the model catalog (`configs/models.yaml`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


def add_models(root: Path, models: dict[str, dict[str, Any]]) -> Path:
    """Add `models` (name -> settings) to `root`'s catalog and return the catalog's path.

    The catalog is parsed and written back rather than appended to as text, so an entry always
    lands under `models:` whatever the file's last section or indentation is."""
    catalog = root / "configs" / "models.yaml"
    data = yaml.safe_load(catalog.read_text(encoding="utf-8"))
    data["models"].update(models)
    catalog.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return catalog
