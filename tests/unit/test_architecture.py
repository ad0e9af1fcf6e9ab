"""Architecture checks on the source of ``edgeopt/`` and the device agent (docs/architecture.md, issues 11, 20).

They read the code with :mod:`ast`, import nothing from edgeopt, and name the offending file and line, so a
regression says where to look:

- no import cycle among edgeopt modules, nor among the agent's (``device_agent/edgeopt_agent``), counting every
  import: function-level ones and those under ``if TYPE_CHECKING:`` too (a local or type-only import hides a
  mutual dependency, it does not remove it). A function-level import is still the way to import a heavy
  third-party library lazily: only imports of the package's own modules make edges;
- the agent never imports edgeopt (it runs alone on the device);
- no function longer than :data:`MAX_FUNCTION_LINES` lines;
- no module imports ``__version__`` from the package root (it lives in ``edgeopt/_version.py``);
- no type or capability sniffing on runners (``isinstance(.. Runner``, ``hasattr(runner``,
  ``inspect.signature``): the ``Runner`` protocol declares everything its callers use.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "edgeopt"
ROOT = Path(__file__).resolve().parents[2] / PACKAGE
AGENT_ROOT = Path(__file__).resolve().parents[2] / "device_agent" / "edgeopt_agent"
# No cycle is allowed (the last one, optimize <-> optimize_fidelity, went with the optimize package).
ALLOWED_CYCLES: frozenset[frozenset[str]] = frozenset()
MAX_FUNCTION_LINES = 80
# Runner\b: isinstance(exc, RunnerError) checks an exception, not a runner.
RUNNER_SNIFFING = re.compile(r"isinstance\(.*Runner\b|hasattr\(runner|inspect\.signature")


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


def _modules(root: Path = ROOT) -> dict[str, Module]:
    found: dict[str, Module] = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        name = ".".join(parts)
        found[name] = Module(name, path, ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
    return found


MODULES = _modules()
AGENT_MODULES = _modules(AGENT_ROOT)


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


def _long_functions() -> list[str]:
    offenders = []
    for module in MODULES.values():
        for node in ast.walk(module.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                length = (node.end_lineno or node.lineno) - start + 1
                if length > MAX_FUNCTION_LINES:
                    offenders.append(f"{module.rel}:{node.lineno} {node.name} ({length} lines)")
    return offenders


def test_no_function_over_80_lines() -> None:
    offenders = _long_functions()
    assert not offenders, f"split into named steps (max {MAX_FUNCTION_LINES} lines): " + "; ".join(offenders)


def test_no_runner_type_or_capability_sniffing() -> None:
    offenders = []
    for module in MODULES.values():
        for number, line in enumerate(module.path.read_text(encoding="utf-8").splitlines(), start=1):
            if RUNNER_SNIFFING.search(line):
                offenders.append(f"{module.rel}:{number}: {line.strip()}")
    assert not offenders, "use the Runner protocol (run/evaluate/probe/describe/close):\n  " + "\n  ".join(offenders)


def _builtin_names(dict_name: str) -> set[str]:
    """The keys of a ``BUILTIN_*`` dict in ``edgeopt/registry/__init__.py``, read from its source (nothing imported)."""
    tree = MODULES["edgeopt.registry"].tree
    for node in tree.body:
        target = node.target if isinstance(node, ast.AnnAssign) else (
            node.targets[0] if isinstance(node, ast.Assign) else None)
        if isinstance(target, ast.Name) and target.id == dict_name and isinstance(node.value, ast.Dict):
            return {k.value for k in node.value.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
    raise AssertionError(f"{dict_name} not found in edgeopt/registry/__init__.py")


# Modules that are one runtime's own code and so name it: its exporter, its converter pass, the library driver the
# registry points at. Everything else asks the registry (descriptors), so a new runtime touches no other module.
RUNTIME_OWN_MODULES: dict[str, set[str]] = {
    "edgeopt.names": {"*"},  # the names' constants for the built-ins (RuntimeName.ONNXRUNTIME)
    "edgeopt.llm.ort_genai_export": {"onnxruntime", "onnxruntime_genai"},  # its exporter
    "edgeopt.llm.ov_genai_export": {"openvino", "openvino_genai"},  # its exporter (OpenVINO + NNCF)
    "edgeopt.llm.gguf_export": {"llama_cpp"},  # its exporter (llama.cpp's converter and quantizer)
    "edgeopt.passes.to_openvino": {"openvino"},  # its converter pass
    "edgeopt.passes.to_tflite": {"tflite"},  # its converter pass
    "edgeopt.passes.validate": {"onnxruntime"},  # the ONNX reference the conversions are proven against
    "edgeopt.sweep.int8.ov": {"openvino"},  # the NNCF backend of the INT8 search drives OpenVINO itself
    "edgeopt.tools.manager": {"tflite"},  # the TFLite converter's tool environment
    "edgeopt.tools.tflite_driver": {"tflite"},
    "edgeopt.targets.schema": {"openvino"},  # a target's OpenVINO device name field
}


def _docstring_nodes(tree: ast.Module) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                ids.add(id(first.value))
    return ids


def runtime_name_literals(modules: dict[str, Module], runtimes: set[str]) -> list[str]:
    """``file:line 'name'`` for each string literal equal to a runtime name in a module outside the registry that
    is not that runtime's own code (docstrings aside)."""
    offenders = []
    for module in modules.values():
        if module.name == "edgeopt.registry" or module.name.startswith("edgeopt.registry."):
            continue
        own = RUNTIME_OWN_MODULES.get(module.name, set())
        docs = _docstring_nodes(module.tree)
        for node in ast.walk(module.tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in runtimes
                    and id(node) not in docs and "*" not in own and node.value not in own):
                offenders.append(f"{module.path.as_posix()}:{node.lineno} {node.value!r}")
    return offenders


def test_no_module_outside_the_registry_names_a_runtime() -> None:
    """Issue 30 item 6: runtime facts live on descriptors; a module that names a runtime is a table outside the
    registry (a third generative runtime would have to edit it)."""
    runtimes = _builtin_names("BUILTIN_RUNTIMES")
    assert {"onnxruntime", "onnxruntime_genai", "openvino_genai"} <= runtimes
    offenders = runtime_name_literals(MODULES, runtimes)
    assert not offenders, ("ask the registry (a descriptor field) instead of naming a runtime:\n  "
                           + "\n  ".join(offenders))


def test_the_runtime_naming_rule_catches_a_table(tmp_path: Path) -> None:
    """The rule above fails on the kind of table issue 30 removed (and not on a docstring)."""
    path = tmp_path / "edgeopt" / "bench" / "table.py"
    source = '"""Mentions "openvino_genai" in prose."""\nMARKER = {"openvino_genai": "openvino_model.xml"}\n'
    module = Module("edgeopt.bench.table", path, ast.parse(source))
    found = runtime_name_literals({module.name: module}, {"openvino_genai"})
    assert len(found) == 1 and ":2 'openvino_genai'" in found[0]


# Issue 31 item 1: every byte edgeopt did not just write enters through one reader (edgeopt/inbound.py and the
# structure checkers it uses), which holds the size, depth, type and regular-file limits. A raw parser call
# elsewhere is a surface that forgot them.
RAW_PARSERS = {("json", "load"), ("json", "loads"), ("yaml", "load"), ("yaml", "safe_load"), ("yaml", "full_load"),
               ("yaml", "unsafe_load"), ("np", "load"), ("numpy", "load"), ("pickle", "load"), ("pickle", "loads")}
RAW_METHODS = {"model_validate_json"}  # pydantic parses the whole text first: check it with jsonio before
READER_MODULES = {
    "edgeopt.inbound": "the one reader",
    "edgeopt.jsonio": "JSON: size and depth before parsing",
    "edgeopt.yamlio": "YAML: aliases and depth before building",
    "edgeopt.tools.tflite_driver": "runs in the TFLite tool's own venv and never imports edgeopt; reads the "
                                   "request edgeopt wrote to its stdin",
}


def raw_parser_calls(modules: dict[str, Module]) -> list[str]:
    """``file:line call`` for each raw parser call in a module that is not one of :data:`READER_MODULES`."""
    offenders = []
    for module in modules.values():
        if module.name in READER_MODULES:
            continue
        for node in ast.walk(module.tree):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
                continue
            owner = node.func.value.id if isinstance(node.func.value, ast.Name) else None
            if (owner, node.func.attr) in RAW_PARSERS or node.func.attr in RAW_METHODS:
                offenders.append(f"{module.path.as_posix()}:{node.lineno} {owner or '...'}.{node.func.attr}()")
    return offenders


def test_untrusted_bytes_enter_through_one_reader() -> None:
    offenders = raw_parser_calls(MODULES)
    assert not offenders, ("read through edgeopt.inbound (read_json, load_arrays, read_text), edgeopt.jsonio or "
                           "edgeopt.yamlio, which hold the limits (docs/reliability.md, 'Untrusted files'):\n  "
                           + "\n  ".join(offenders))


def test_the_one_reader_rule_catches_a_raw_parser(tmp_path: Path) -> None:
    source = ('import json\nimport numpy as np\n\ndef f(p):\n    """json.loads in prose."""\n'
              '    return json.loads(p.read_text()), np.load(p), Model.model_validate_json("{}")\n')
    module = Module("edgeopt.bench.sneaky", tmp_path / "sneaky.py", ast.parse(source))
    found = raw_parser_calls({module.name: module})
    assert [f.split(" ")[1] for f in found] == ["json.loads()", "np.load()", "Model.model_validate_json()"]


def kind_tests(modules: dict[str, Module], kinds: set[str]) -> list[str]:
    """``file:line`` for each comparison with a literal kind name (``kind == "generative"``, ``in ("tensor", ...)``)
    or a ``kind="..."`` keyword outside the registry: a branch on the kind, where the registry should answer. A
    dict key such as ``"tensor"`` (an ONNX tensor's name) is not a kind test."""
    offenders = []
    for module in modules.values():
        if module.name == "edgeopt.registry" or module.name.startswith("edgeopt.registry."):
            continue
        for node in ast.walk(module.tree):
            found: list[ast.AST] = []
            if isinstance(node, ast.Compare):
                found = [c for c in ast.walk(node) if isinstance(c, ast.Constant) and c.value in kinds]
            elif isinstance(node, ast.keyword) and node.arg == "kind":
                found = [c for c in ast.walk(node.value) if isinstance(c, ast.Constant) and c.value in kinds]
            offenders += [f"{module.path.as_posix()}:{getattr(node, 'lineno', '?')} {c.value!r}" for c in found]
    return offenders


def test_no_module_outside_the_registry_names_a_kind() -> None:
    """Issue 30 item 6, for model kinds: a stage asks the registry (``model_kind``, a descriptor's ``kind``) or uses
    the kind constants (``registry.GENERATIVE``/``TENSOR``), never a literal kind name in a test, so a third kind
    is not an ``if kind == "..."`` chain to extend."""
    kinds = _builtin_names("BUILTIN_KINDS")
    assert {"tensor", "generative"} <= kinds
    offenders = kind_tests(MODULES, kinds)
    assert not offenders, "use the registry's kind constants or descriptors:\n  " + "\n  ".join(offenders)


def test_the_kind_rule_catches_a_branch(tmp_path: Path) -> None:
    source = 'ROW = {"tensor": "x"}\nif kind == "generative":\n    pass\nf(kind="tensor")\n'
    module = Module("edgeopt.bench.branchy", tmp_path / "branchy.py", ast.parse(source))
    assert [o.split(" ")[1] for o in kind_tests({module.name: module}, {"tensor", "generative"})] == [
        "'generative'", "'tensor'"]


# Issue 30 item 4, "one engine per task": a command asks the model's kind for its task entry (edgeopt.dispatch:
# kind_of -> KindDescriptor.bench_cli, qualify, ...), never "is this an LLM?". The helpers below answer that
# question; only the registry and the generative kind's own engine modules (which check the folder they are handed)
# may call them.
KIND_ASKERS = {"is_llm_model", "llm_folder_format", "folder_format", "is_llm"}
KIND_OWN_MODULES = ("edgeopt.registry", "edgeopt.bench.llm", "edgeopt.llm", "edgeopt.qualify.llm_")


def kind_asker_calls(modules: dict[str, Module]) -> list[str]:
    """``file:line name()`` for each call of a :data:`KIND_ASKERS` helper in a module outside
    :data:`KIND_OWN_MODULES` (a plain or an attribute call: ``folder_format(p)``, ``api.llm_folder_format(p)``)."""
    offenders = []
    for module in modules.values():
        if module.name.startswith(KIND_OWN_MODULES):
            continue
        for node in ast.walk(module.tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
            if name in KIND_ASKERS:
                offenders.append(f"{module.path.as_posix()}:{node.lineno} {name}()")
    return offenders


def test_no_module_outside_the_kinds_asks_which_kind_a_model_is() -> None:
    offenders = kind_asker_calls(MODULES)
    assert not offenders, ("dispatch through the model's kind (edgeopt.dispatch.kind_of, then entry(kind, task)) "
                           "instead of asking whether it is an LLM:\n  " + "\n  ".join(offenders))


def test_the_kind_asker_rule_catches_a_question(tmp_path: Path) -> None:
    source = ('from ..bench.llm import api\nfrom .llm_kind import is_llm_model\n\ndef f(spec, p):\n'
              '    """is_llm_model(spec) in prose."""\n    if is_llm_model(spec, p) or api.llm_folder_format(p):\n'
              '        return 1\n    is_llm = 2\n    return is_llm\n')
    module = Module("edgeopt.cli.sneaky", tmp_path / "sneaky.py", ast.parse(source))
    assert [f.split(" ")[1] for f in kind_asker_calls({module.name: module})] == [
        "is_llm_model()", "llm_folder_format()"]
    own = Module("edgeopt.bench.llm.fleet", tmp_path / "fleet.py", ast.parse(source))
    assert kind_asker_calls({own.name: own}) == []
