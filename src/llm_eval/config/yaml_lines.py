"""YAML loading that remembers the line of every key, so errors can say `file:line`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

KeyPath = tuple[str | int, ...]


@dataclass(frozen=True)
class LocatedYaml:
    """A parsed YAML document plus the 1-based line of each key path in it."""

    path: Path
    data: Any
    lines: dict[KeyPath, int]
    duplicates: list[tuple[KeyPath, int]]

    def line_of(self, *keys: str | int) -> int | None:
        """Line of the deepest known prefix of `keys` (a missing key points at its parent)."""
        for end in range(len(keys), 0, -1):
            line = self.lines.get(tuple(keys[:end]))
            if line is not None:
                return line
        return None


def load_located_yaml(path: Path) -> LocatedYaml:
    """Parse `path`; raise `yaml.YAMLError` (with its own mark) when it is not valid YAML."""
    text = path.read_text(encoding="utf-8")
    node = yaml.compose(text, Loader=yaml.SafeLoader)
    data = yaml.safe_load(text) if node is not None else None
    lines: dict[KeyPath, int] = {}
    duplicates: list[tuple[KeyPath, int]] = []
    if node is not None:
        _walk(node, (), lines, duplicates)
    return LocatedYaml(path=path, data=data, lines=lines, duplicates=duplicates)


def _walk(
    node: yaml.Node,
    prefix: KeyPath,
    lines: dict[KeyPath, int],
    duplicates: list[tuple[KeyPath, int]],
) -> None:
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key_path = (*prefix, key_node.value)
            line = key_node.start_mark.line + 1
            # PyYAML silently keeps the last of two equal keys; a duplicate name is an error.
            if key_path in lines:
                duplicates.append((key_path, line))
            else:
                lines[key_path] = line
            _walk(value_node, key_path, lines, duplicates)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            lines[(*prefix, index)] = item.start_mark.line + 1
            _walk(item, (*prefix, index), lines, duplicates)
