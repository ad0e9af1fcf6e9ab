"""Read a user's YAML file (target, recipe, qualification spec, profile, inventory) without letting it hang or
exhaust memory.

``yaml.safe_load`` alone constructs no objects, but it still accepts what takes minutes or gigabytes afterwards:
an alias bomb ("billion laughs", nine levels of ten aliases: 10^9 values once anything walks it), a recursive
alias (``&a [*a]``), nesting deeper than Python's recursion limit, and files of many megabytes (the pure-Python
parser reads some 10-100 KB/s on a loaded board). Every reader of user YAML goes through :func:`read_text` and
:func:`compose`, which refuse those with a one-line :class:`YamlLimitError` before any value is built.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

__all__ = ["MAX_DEPTH", "MAX_NODES", "MAX_YAML_BYTES", "YamlLimitError", "compose", "construct", "read_text",
           "safe_load"]

MAX_YAML_BYTES = 256 * 1024  # a config file; the largest shipped one is ~2 KB, a 1,000-device inventory ~200 KB
MAX_NODES = 50_000  # values once every alias is expanded
MAX_DEPTH = 64  # nesting of mappings and lists

# libyaml's parser is C and iterative (deep nesting is a ScannerError, not a RecursionError); fall back otherwise.
_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class YamlLimitError(yaml.YAMLError):
    """The file is too large, not UTF-8, or its aliases/nesting go past the limits; ``str()`` is one line."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem
        self.problem_mark = None


def read_text(path: Path) -> str:
    """The UTF-8 text of ``path`` (a BOM is skipped), refusing files over :data:`MAX_YAML_BYTES`.

    Raises:
        OSError: the file cannot be read (callers word this one themselves).
        YamlLimitError: too large, or not UTF-8 (the message names the offset of the first bad byte).
    """
    from .inbound import InboundError, read_bytes

    size = Path(path).stat().st_size
    if size > MAX_YAML_BYTES:
        raise YamlLimitError(f"the file is {size / 1024:.0f} KiB, over the {MAX_YAML_BYTES // 1024} KiB limit for a "
                             "YAML config file; is it the right file?")
    try:
        data = read_bytes(Path(path), max_bytes=MAX_YAML_BYTES)
    except InboundError as exc:
        raise YamlLimitError(f"{exc}; is it the right file?") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise YamlLimitError(f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}); save the file as "
                             "UTF-8") from None


def _check(root: yaml.Node) -> None:
    """Refuse recursive aliases, nesting deeper than :data:`MAX_DEPTH` and more than :data:`MAX_NODES` values.

    Iterative, with the expanded size of each node memoised by identity, so an alias bomb costs its node count
    (tens), not its expansion (10^9).
    """
    size: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, int, bool]] = [(root, 1, False)]
    while stack:
        node, depth, done = stack.pop()
        key = id(node)
        children = _children(node)
        if done:
            on_path.discard(key)
            size[key] = 1 + sum(size[id(c)] for c in children)
            if size[key] > MAX_NODES:
                raise YamlLimitError(f"its aliases expand to more than {MAX_NODES:,} values (an alias bomb?); write "
                                     "the values out or use fewer aliases")
            continue
        if key in size:
            continue
        if key in on_path:
            raise YamlLimitError(f"line {node.start_mark.line + 1}: an alias refers to the value that contains it "
                                 "(a recursive alias); remove it")
        if depth > MAX_DEPTH:
            raise YamlLimitError(f"line {node.start_mark.line + 1}: nested more than {MAX_DEPTH} levels deep; flatten "
                                 "it")
        on_path.add(key)
        stack.append((node, depth, True))
        stack.extend((child, depth + 1, False) for child in children if id(child) not in size)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def compose(text: str) -> tuple[Any, yaml.Node | None]:
    """Parse ``text`` into its node graph, checked against the limits; returns (loader, node) for :func:`construct`.

    Raises:
        yaml.YAMLError: a syntax error, or :class:`YamlLimitError`.
    """
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is not None:
            _check(node)
    except RecursionError:
        loader.dispose()
        raise YamlLimitError(f"nested too deeply to parse (over {MAX_DEPTH} levels); flatten it") from None
    except BaseException:
        loader.dispose()
        raise
    return loader, node


def construct(loader: Any, node: yaml.Node | None) -> Any:
    """The Python value of a node from :func:`compose` (None for an empty document)."""
    try:
        return loader.construct_document(node) if node is not None else None
    finally:
        loader.dispose()


def safe_load(text: str) -> Any:
    """``yaml.safe_load`` within the limits of this module."""
    return construct(*compose(text))
