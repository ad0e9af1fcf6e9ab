"""The source of ``edgeopt/`` and of the device agent as parsed trees, for the architecture checks of this package
(docs/architecture.md, issues 11, 20, 30, 31): they read the code with :mod:`ast`, import nothing from edgeopt, and
name the offending file and line."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "edgeopt"
ROOT = Path(__file__).resolve().parents[3] / PACKAGE
AGENT_ROOT = Path(__file__).resolve().parents[3] / "device_agent" / "edgeopt_agent"


@dataclass(frozen=True)
class Module:
    """One source file of the package: its dotted name, path and parsed tree."""

    name: str
    path: Path
    tree: ast.Module

    @property
    def is_package(self) -> bool:
        return self.path.name == "__init__.py"

    @property
    def rel(self) -> str:
        return str(self.path.relative_to(ROOT.parent))


def parse_modules(root: Path = ROOT) -> dict[str, Module]:
    found: dict[str, Module] = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        name = ".".join(parts)
        found[name] = Module(name, path, ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
    return found


MODULES = parse_modules()
AGENT_MODULES = parse_modules(AGENT_ROOT)


def builtin_names(dict_name: str) -> set[str]:
    """The keys of a ``BUILTIN_*`` dict in ``edgeopt/registry/__init__.py``, read from its source (nothing imported)."""
    tree = MODULES["edgeopt.registry"].tree
    for node in tree.body:
        target = node.target if isinstance(node, ast.AnnAssign) else (
            node.targets[0] if isinstance(node, ast.Assign) else None)
        if isinstance(target, ast.Name) and target.id == dict_name and isinstance(node.value, ast.Dict):
            return {k.value for k in node.value.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
    raise AssertionError(f"{dict_name} not found in edgeopt/registry/__init__.py")


def docstring_nodes(tree: ast.Module) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                ids.add(id(first.value))
    return ids
