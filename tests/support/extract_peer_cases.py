"""Rebuild tests/scoring/peer_cases.jsonl from a checkout of Math-Verify or lighteval.

Reads every `@pytest.mark.parametrize` with `gold`, `pred` and `expected` in the repository's
tests (parsed with `ast`, values taken with `ast.literal_eval`, so strings stay exact), and
keeps the cases whose gold is one plain number (digits, a decimal, `a/b`, `\\frac{a}{b}`,
optionally in `$...$` or `\\boxed{}`): sets, intervals, equations, symbols and choices are
left out. Math-Verify is Apache-2.0 (its test_all.py carries an MIT header), lighteval
MIT; see tests/scoring/PEER_CASES_NOTICE.md. The cases keep their source, file and commit.

    PEER_GIT=<git dir of Math-Verify> PEER_SOURCE=math-verify \\
        uv run python tests/support/extract_peer_cases.py > math-verify.jsonl
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

from llm_eval.scoring.numeric import expected_value

_PLAIN_NUMBER = re.compile(r"^-?(?:\d[\d,. ]*|\.\d+|\\[dtc]?frac\{-?\d+\}\{\d+\}|\d+/\d+)\s*%?$")
_WRAPPERS = (("\\boxed{", "}"), ("\\(", "\\)"), ("\\[", "\\]"))


def git(git_dir: str, *args: str) -> str:
    command = ["git", f"--git-dir={git_dir}", *args]
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout


def is_one_number(gold: str) -> bool:
    text = gold.strip().strip("$").strip()
    for opening, closing in _WRAPPERS:
        if text.startswith(opening) and text.endswith(closing):
            text = text[len(opening) : -len(closing)].strip()
    if not _PLAIN_NUMBER.match(text):
        return False  # a set, an interval, an equation, a symbol
    return expected_value(text.rstrip("%").strip()) is not None


def parametrized(tree: ast.AST) -> Iterator[tuple[str, list[str], Any]]:
    """(test name, parameter names, cases) of every parametrize decorator in a test file."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef):
            continue
        for decorator in node.decorator_list:
            if not isinstance(decorator, ast.Call) or getattr(decorator.func, "attr", "") != (
                "parametrize"
            ):
                continue
            first = decorator.args[0]
            if not isinstance(first, ast.Constant) or not isinstance(first.value, str):
                continue
            try:
                cases = ast.literal_eval(decorator.args[1])
            except ValueError:
                continue
            yield node.name, [n.strip() for n in first.value.split(",")], cases


def extract(git_dir: str, source: str) -> list[dict[str, Any]]:
    commit = git(git_dir, "rev-parse", "HEAD").strip()
    files = [
        name
        for name in git(git_dir, "ls-tree", "-r", "HEAD", "--name-only").split()
        if name.endswith(".py") and (name.startswith("tests/test_") or "extractive_match" in name)
    ]
    seen: set[tuple[str, str]] = set()
    found: list[dict[str, Any]] = []
    for path in files:
        for test, names, cases in parametrized(ast.parse(git(git_dir, "show", f"HEAD:{path}"))):
            if not {"gold", "pred", "expected"} <= set(names):
                continue
            for case in cases:
                if not isinstance(case, tuple) or len(case) != len(names):
                    continue
                values = dict(zip(names, case, strict=True))
                gold, pred = values["gold"], values["pred"]
                if not isinstance(gold, str) or not isinstance(pred, str):
                    continue
                if not is_one_number(gold) or (gold, pred) in seen:
                    continue
                seen.add((gold, pred))
                found.append({"source": source, "file": path, "commit": commit, "gold": gold,
                              "prediction": pred, "expected": bool(values["expected"]),
                              "note": test})  # fmt: skip
    return found


if __name__ == "__main__":
    for case in extract(os.environ["PEER_GIT"], os.environ["PEER_SOURCE"]):
        sys.stdout.write(json.dumps(case, ensure_ascii=False) + "\n")
