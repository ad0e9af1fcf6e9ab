"""No import cycle among edgeopt's modules nor the agent's (every import counts: function-level ones and those
under ``if TYPE_CHECKING:`` too; only imports of the package's own modules make edges), the agent never imports
edgeopt, and no module imports ``__version__`` from the package root."""

from __future__ import annotations

import ast

from tests.unit.architecture.source import (
    AGENT_MODULES,
    MODULES,
    PACKAGE,
    ROOT,
    Module,
)

# No cycle is allowed (the last one, optimize <-> optimize_fidelity, went with the optimize package).
ALLOWED_CYCLES: frozenset[frozenset[str]] = frozenset()


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _module_level_imports(body: list[ast.stmt]) -> list[ast.Import | ast.ImportFrom]:
    """Import statements that run when the module is imported (not in functions, classes or TYPE_CHECKING)."""
    found: list[ast.Import | ast.ImportFrom] = []
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        elif isinstance(node, ast.If):
            if not _is_type_checking(node.test):
                found += _module_level_imports(node.body)
            found += _module_level_imports(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)):
                found += _module_level_imports(block)
        elif isinstance(node, ast.With):
            found += _module_level_imports(node.body)
    return found


def _all_imports(body: list[ast.stmt]) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement: in functions, methods and classes, and under ``if TYPE_CHECKING:`` too."""
    found = [n for stmt in body for n in ast.walk(stmt) if isinstance(n, (ast.Import, ast.ImportFrom))]
    return sorted(found, key=lambda n: n.lineno)


def _base_of(module: Module, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = module.name.split(".") if module.is_package else module.name.split(".")[:-1]
    anchor = package[: len(package) - (node.level - 1)]
    return ".".join(anchor + ([node.module] if node.module else []))


def _targets(module: Module, node: ast.Import | ast.ImportFrom, modules: dict[str, Module]) -> list[str]:
    """The package's modules one import statement loads by name (``from p import sub`` names ``p.sub``)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names if alias.name in modules]
    base = _base_of(module, node)
    targets = []
    for alias in node.names:
        sub = f"{base}.{alias.name}"
        if sub in modules:
            targets.append(sub)
        elif base in modules:
            targets.append(base)
    return targets


def import_graph(modules: dict[str, Module] | None = None, *, function_level: bool = True) -> dict[str, dict[str, int]]:
    """Module -> {imported module of the same package: line of the import}.

    Args:
        modules: the package's modules (default: edgeopt's).
        function_level: count every import, in functions, methods and ``TYPE_CHECKING`` blocks too (the
            default: they make a mutual dependency as surely as module-level ones); False: only those that run
            when the module is imported.
    """
    modules = MODULES if modules is None else modules
    graph: dict[str, dict[str, int]] = {}
    for module in modules.values():
        edges: dict[str, int] = {}
        found = _all_imports(module.tree.body) if function_level else _module_level_imports(module.tree.body)
        for node in found:
            for target in _targets(module, node, modules):
                if target != module.name:
                    edges.setdefault(target, node.lineno)
        graph[module.name] = edges
    return graph


def find_cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """Every strongly connected component with more than one module, each as one cycle through it."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def connect(start: str) -> None:
        # Iterative Tarjan: the package graph is deep enough to make recursion a risk on small stacks.
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))

    for name in sorted(graph):
        if name not in index:
            connect(name)
    return [_cycle_through(graph, set(c)) for c in components]


def _cycle_through(graph: dict[str, dict[str, int]], members: set[str]) -> list[str]:
    """A shortest path from the first member back to itself inside its component."""
    start = min(members)
    parents: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(graph[node]):
                if child not in members:
                    continue
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(parents[path[-1]])
                    return [start, *reversed(path[:-1]), start]
                if child not in parents:
                    parents[child] = node
                    following.append(child)
        frontier = following
    return sorted(members)


def _describe(cycle: list[str], graph: dict[str, dict[str, int]], modules: dict[str, Module]) -> str:
    steps = [f"{modules[a].rel}:{graph[a][b]} imports {b}" for a, b in zip(cycle, cycle[1:], strict=False)]
    return " -> ".join(cycle) + "\n    " + "\n    ".join(steps)


def test_no_import_cycle() -> None:
    graph = import_graph()
    cycles = [c for c in find_cycles(graph) if frozenset(c) not in ALLOWED_CYCLES]
    assert not cycles, "import cycles among edgeopt modules (function-level imports count):\n  " + "\n  ".join(
        _describe(c, graph, MODULES) for c in cycles)


def test_no_import_cycle_in_the_agent() -> None:
    graph = import_graph(AGENT_MODULES)
    cycles = find_cycles(graph)
    assert not cycles, "import cycles among edgeopt_agent modules (function-level imports count):\n  " + \
        "\n  ".join(_describe(c, graph, AGENT_MODULES) for c in cycles)


def test_the_agent_never_imports_edgeopt() -> None:
    offenders = []
    for module in AGENT_MODULES.values():
        for node in _all_imports(module.tree.body):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            if not getattr(node, "level", 0) and any(n == PACKAGE or n.startswith(PACKAGE + ".") for n in names):
                offenders.append(f"{module.rel}:{node.lineno}")
    assert not offenders, "the device agent runs alone and must not import edgeopt: " + ", ".join(offenders)


def test_a_function_level_import_closes_a_cycle() -> None:
    """The graph counts imports inside functions and under TYPE_CHECKING: a back-reference written there is still
    a cycle."""
    source = ("if TYPE_CHECKING:\n    from . import b\n", "def f():\n    from . import a\n    return a\n")
    modules = {name: Module(name, ROOT / "pkg" / f"{name[-1]}.py", ast.parse(text))
               for name, text in zip(("edgeopt.pkg.a", "edgeopt.pkg.b"), source, strict=True)}
    assert find_cycles(import_graph(modules)) == [["edgeopt.pkg.a", "edgeopt.pkg.b", "edgeopt.pkg.a"]]
    assert find_cycles(import_graph(modules, function_level=False)) == []


def test_cycle_finder_reports_a_planted_cycle() -> None:
    """The checker itself: a cycle and a self-free acyclic graph."""
    graph = {"a": {"b": 1}, "b": {"c": 2}, "c": {"a": 3, "d": 4}, "d": {}}
    assert find_cycles(graph) == [["a", "b", "c", "a"]]
    assert find_cycles({"a": {"b": 1}, "b": {}}) == []


def test_version_is_not_imported_from_the_package_root() -> None:
    offenders = []
    for module in MODULES.values():
        for node in ast.walk(module.tree):
            if (isinstance(node, ast.ImportFrom) and any(a.name == "__version__" for a in node.names)
                    and _base_of(module, node) == PACKAGE):
                offenders.append(f"{module.rel}:{node.lineno}")
    assert not offenders, "import __version__ from edgeopt._version instead: " + ", ".join(offenders)
