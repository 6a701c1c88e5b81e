"""One reader of params.yaml and configs/models.yaml as plain data, for tracking and DVC."""

from __future__ import annotations

from pathlib import Path

import yaml

from llm_eval.config.layout import pipeline_models
from llm_eval.config.loading import load_config, read_params
from llm_eval.tracking.context import read_params as tracking_params


def test_params_come_with_the_models_folded_in(config_copy: Path) -> None:
    params = read_params(config_copy)
    assert params is not None
    on_disk = yaml.safe_load((config_copy / "params.yaml").read_text(encoding="utf-8"))
    assert {key: params[key] for key in on_disk} == on_disk
    assert set(params["models"]) == set(load_config(config_copy).models)
    assert tracking_params(config_copy) == params
    assert pipeline_models(config_copy) == list(dict.fromkeys(on_disk["run"]["models"]))


def test_a_missing_or_broken_params_file_reads_as_none(config_copy: Path) -> None:
    models = config_copy / "configs" / "models.yaml"
    models.write_text("models: [unclosed\n", encoding="utf-8")
    params = read_params(config_copy)
    assert params is not None and params["models"] == {}  # a broken models file: no models
    (config_copy / "params.yaml").write_text("run: [unclosed\n", encoding="utf-8")
    assert read_params(config_copy) is None
    (config_copy / "params.yaml").unlink()
    assert read_params(config_copy) is None and tracking_params(config_copy) is None
