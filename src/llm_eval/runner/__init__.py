"""The run stage: tasks x models through flows and providers, one trace row each.

Import the pieces from their modules (`llm_eval.runner.runner`, `.model_client`, ...):
this package's `__init__` stays empty so that reading traces does not load the runner.
"""
