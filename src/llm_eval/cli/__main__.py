"""`python -m llm_eval.cli` runs the command line."""

from llm_eval.cli.app import main

main()
