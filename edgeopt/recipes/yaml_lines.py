"""YAML loading that remembers the line of every key and list item, so errors can name ``file:line``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from ..errors import first_line
from ..yamlio import YamlLimitError, compose, construct, read_text

Path_ = tuple[str | int, ...]


def load_with_lines(text: str) -> tuple[Any, dict[Path_, int]]:
    """Parse ``text`` (safe loader) and map each key path, e.g. ``("passes", 1, "config", "bits")``, to its line.

    Raises:
        yaml.YAMLError: the text is not valid YAML, or past the limits of :mod:`edgeopt.yamlio` (alias bombs...).
    """
    loader, node = compose(text)
    data = construct(loader, node)
    lines: dict[Path_, int] = {}
    if node is not None:
        _walk(node, (), lines)
    return data, lines


def _walk(node: yaml.Node, path: Path_, lines: dict[Path_, int]) -> None:
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else str(key_node.value)
            lines[path + (key,)] = key_node.start_mark.line + 1
            _walk(value_node, path + (key,), lines)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            lines[path + (i,)] = item.start_mark.line + 1
            _walk(item, path + (i,), lines)


def line_of(lines: dict[Path_, int], path: Path_) -> int | None:
    """The line of ``path`` or of its longest prefix that has one (None when nothing matches)."""
    for end in range(len(path), -1, -1):
        if path[:end] in lines:
            return lines[path[:end]]
    return None


def read_yaml_with_lines(path: Path, what: str, error: type[Exception]) -> tuple[Any, dict[Path_, int]]:
    """Read and parse a YAML file with :func:`load_with_lines`; a read or syntax failure raises ``error`` with one
    line naming the file (and the line of a syntax error), e.g. ``what="recipe"``."""
    try:
        text = read_text(path)
    except OSError as exc:
        raise error(f"{path}: cannot read {what} ({' '.join(str(exc).split())}); check the path") from None
    except YamlLimitError as exc:
        raise error(f"{path}: {exc.problem}") from None
    try:
        return load_with_lines(text)
    except YamlLimitError as exc:
        raise error(f"{path}: {exc.problem}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        problem = getattr(exc, "problem", None) or first_line(exc, limit=None)
        raise error(f"{where}: YAML syntax error ({problem}); fix the YAML there") from None
