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


MAX_ALIAS_NODES = 100_000
"""A file whose aliases add more than this many nodes is refused: a few hundred bytes of
nested aliases expand to gigabytes (a "billion laughs" document). Nodes written out in the
file count for nothing here, so a long plain file (10,000 models) loads."""

_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's parser where PyYAML was built with it (ten times faster), else the pure one."""


class YamlInputError(yaml.YAMLError):
    """The file cannot be read as YAML at all (not UTF-8, or an alias bomb)."""

    def __init__(self, problem: str, line: int | None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.line = line


def load_located_yaml(path: Path) -> LocatedYaml:
    """Parse `path`; raise `yaml.YAMLError` (with its own mark) when it is not valid YAML."""
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise YamlInputError(f"not valid UTF-8 (byte {exc.start})", line) from None
    _check_aliases(text)
    # One parse gives both the node tree (for lines) and the data built from it.
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    finally:
        loader.dispose()
    lines: dict[KeyPath, int] = {}
    duplicates: list[tuple[KeyPath, int]] = []
    if node is not None:
        _walk(node, (), lines, duplicates)
    return LocatedYaml(path=path, data=data, lines=lines, duplicates=duplicates)


def _check_aliases(text: str) -> None:
    """Count the nodes that expanding every alias would add; refuse a bomb.

    Runs on the parser's events, so it costs one linear pass whatever the aliases hold. A
    document without aliases is not counted at all.
    """
    if "*" not in text:
        return
    expanded: dict[str, int] = {}
    added = 0
    stack: list[list[Any]] = [[0, None]]
    for event in yaml.parse(text, Loader=_Loader):
        if isinstance(event, yaml.CollectionStartEvent):
            stack.append([1, event.anchor])
            continue
        if isinstance(event, yaml.CollectionEndEvent):
            size, anchor = stack.pop()
        elif isinstance(event, yaml.ScalarEvent):
            size, anchor = 1, event.anchor
        elif isinstance(event, yaml.AliasEvent):
            size, anchor = expanded.get(event.anchor or "", 1), None
            added += size
        else:
            continue
        if anchor:
            expanded[anchor] = size
        stack[-1][0] += size
        if added > MAX_ALIAS_NODES:
            line = event.start_mark.line + 1 if event.start_mark else None
            raise YamlInputError(
                f"aliases would add more than {MAX_ALIAS_NODES} nodes to the document (a "
                "billion-laughs file?): refused; write the repeated parts out instead",
                line,
            )


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
