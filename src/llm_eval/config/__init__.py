"""The suite's configuration: params.yaml and configs/*.yaml, task files, the dry run."""

from llm_eval.config.loading import AppConfig, load_config, raw_params, read_params

__all__ = ["AppConfig", "load_config", "raw_params", "read_params"]
