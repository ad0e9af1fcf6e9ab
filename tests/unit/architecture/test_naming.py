"""Runtimes and model kinds are data: no module outside the registry (and a runtime's or kind's own modules) names a
runtime or a kind, or asks which kind a model is (issue 30); each rule has a test showing it catches a planted
case."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.unit.architecture.source import (
    MODULES,
    Module,
    builtin_names,
    docstring_nodes,
)

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



def runtime_name_literals(modules: dict[str, Module], runtimes: set[str]) -> list[str]:
    """``file:line 'name'`` for each string literal equal to a runtime name in a module outside the registry that
    is not that runtime's own code (docstrings aside)."""
    offenders = []
    for module in modules.values():
        if module.name == "edgeopt.registry" or module.name.startswith("edgeopt.registry."):
            continue
        own = RUNTIME_OWN_MODULES.get(module.name, set())
        docs = docstring_nodes(module.tree)
        for node in ast.walk(module.tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in runtimes
                    and id(node) not in docs and "*" not in own and node.value not in own):
                offenders.append(f"{module.path.as_posix()}:{node.lineno} {node.value!r}")
    return offenders


def test_no_module_outside_the_registry_names_a_runtime() -> None:
    """Issue 30 item 6: runtime facts live on descriptors; a module that names a runtime is a table outside the
    registry (a third generative runtime would have to edit it)."""
    runtimes = builtin_names("BUILTIN_RUNTIMES")
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
    kinds = builtin_names("BUILTIN_KINDS")
    assert {"tensor", "generative"} <= kinds
    offenders = kind_tests(MODULES, kinds)
    assert not offenders, "use the registry's kind constants or descriptors:\n  " + "\n  ".join(offenders)


def test_the_kind_rule_catches_a_branch(tmp_path: Path) -> None:
    source = 'ROW = {"tensor": "x"}\nif kind == "generative":\n    pass\nf(kind="tensor")\n'
    module = Module("edgeopt.bench.branchy", tmp_path / "branchy.py", ast.parse(source))
    assert [o.split(" ")[1] for o in kind_tests({module.name: module}, {"tensor", "generative"})] == [
        "'generative'", "'tensor'"]


# Issue 30 item 4, "one engine per task": a command asks the model's kind for its task entry (edgeopt.dispatch:
# kind_of -> KindDescriptor.bench_cli, qualify, ...), never "is this an LLM?". The helpers below answered that
# question and are gone; a kind's own engine checks the model it is handed with the registry's
# format_of_kind(path, kind), so only the registry may define (and call) a helper by these names again.
KIND_ASKERS = {"is_llm_model", "llm_folder_format", "folder_format", "is_llm"}
KIND_OWN_MODULES = ("edgeopt.registry",)


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
    own = Module("edgeopt.registry.lookup", tmp_path / "lookup.py", ast.parse(source))
    assert kind_asker_calls({own.name: own}) == []


# Issue 30, items 4 and 6, for the history and the CLI: a stored run is read, compared and printed through its
# kind's descriptor (``history_result``, ``compare_render``, ``run_word``), so these packages never branch on a kind:
# no kind constant, and no isinstance against a kind's result or comparison type except to narrow to the type the
# function returns (``HistoryStore.llm_result`` -> LlmBenchResult | None). The version-1 migration is the exception:
# it recognises an old row's kind by its text.
KIND_FREE_PACKAGES = ("edgeopt.history", "edgeopt.cli")
KIND_FREE_EXCEPT = {"edgeopt.history.migrate"}
KIND_CONSTANTS = {"TENSOR", "GENERATIVE"}
KIND_TYPES = {"BenchResult", "KindBenchResult", "RunComparison"}  # and every Llm* type (the generative kind's)


def _is_kind_type(node: ast.AST) -> str | None:
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
    return name if name is not None and (name in KIND_TYPES or name.startswith("Llm")) else None


def _names(node: ast.AST | None) -> set[str]:
    return {n.id if isinstance(n, ast.Name) else n.value if isinstance(n, ast.Constant) else "" for n in
            ast.walk(node)} if node is not None else set()


def kind_branches(modules: dict[str, Module]) -> list[str]:
    """``file:line what`` for each kind constant (imported or used) and each isinstance against a kind's result or
    comparison type (not narrowing to the enclosing function's return type) in :data:`KIND_FREE_PACKAGES`."""
    offenders = []
    for module in modules.values():
        if not module.name.startswith(KIND_FREE_PACKAGES) or module.name in KIND_FREE_EXCEPT:
            continue
        returns: dict[int, set[str]] = {}  # id of a node -> the names in its enclosing function's return annotation
        for fn in ast.walk(module.tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names = set().union(*(_names(n) for n in ast.walk(fn.returns))) if fn.returns else set()
                returns.update({id(n): names for n in ast.walk(fn)})
        for node in ast.walk(module.tree):
            if isinstance(node, ast.ImportFrom):
                found = [f"import {a.name}" for a in node.names if a.name in KIND_CONSTANTS]
            elif isinstance(node, (ast.Name, ast.Attribute)):
                name = node.id if isinstance(node, ast.Name) else node.attr
                found = [name] if name in KIND_CONSTANTS else []
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance" \
                    and len(node.args) == 2:
                types = {t for t in map(_is_kind_type, ast.walk(node.args[1])) if t}
                found = [f"isinstance(..., {t})" for t in sorted(types - returns.get(id(node), set()))]
            else:
                found = []
            offenders += [f"{module.path.as_posix()}:{getattr(node, 'lineno', '?')} {f}" for f in found]
    return offenders


def test_the_history_and_the_cli_never_branch_on_a_kind() -> None:
    offenders = kind_branches(MODULES)
    assert not offenders, ("read, compare and print through the kind's descriptor (history_result, compare_render, "
                           "run_word) instead of asking which kind a run is:\n  " + "\n  ".join(offenders))


def test_the_kind_branch_rule_catches_a_branch(tmp_path: Path) -> None:
    source = ('from ..registry.kind_spec import GENERATIVE\n\n'
              'def show(c) -> None:\n    if isinstance(c, LlmRunComparison):\n        return\n'
              '    if kind != GENERATIVE:\n        return\n\n'
              'def llm_result(s) -> LlmBenchResult | None:\n    return s if isinstance(s, LlmBenchResult) else None\n')
    module = Module("edgeopt.cli.sneaky", tmp_path / "sneaky.py", ast.parse(source))
    assert [o.split(" ", 1)[1] for o in kind_branches({module.name: module})] == [
        "import GENERATIVE", "isinstance(..., LlmRunComparison)", "GENERATIVE"]
    migration = Module("edgeopt.history.migrate", tmp_path / "migrate.py", ast.parse(source))
    elsewhere = Module("edgeopt.qualify.sneaky", tmp_path / "q.py", ast.parse(source))
    assert kind_branches({m.name: m for m in (migration, elsewhere)}) == []


# Issue 30 item 6, for the command line: no module of edgeopt/cli/ names a kind's models (its help texts, docstrings
# and identifiers alike); a kind's part of a command's help is its descriptor's ``cli_help`` (edgeopt/cli/
# kind_help.py composes it), its flags its settings models' (edgeopt/cli/kind_flags.py), so a third kind adds its
# own help without editing edgeopt/cli/.
CLI_KIND_WORDS = ("llm",)


def _texts(node: ast.AST) -> list[str]:
    """The text and names a node carries: a string, a name, an attribute, an import, a definition, an argument."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, ast.ImportFrom):
        return [node.module or "", *(a.name for a in node.names)]
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, ast.arg):
        return [node.arg]
    return []


def cli_kind_words(modules: dict[str, Module], words: tuple[str, ...] = CLI_KIND_WORDS) -> list[str]:
    """``file:line 'text'`` for each string or name in a module of edgeopt/cli/ that holds one of ``words``
    (case-insensitive)."""
    offenders = []
    for module in modules.values():
        if not module.name.startswith("edgeopt.cli"):
            continue
        for node in ast.walk(module.tree):
            for text in _texts(node):
                if any(w in text.lower() for w in words):
                    offenders.append(f"{module.path.as_posix()}:{getattr(node, 'lineno', '?')} {text[:60]!r}")
    return offenders


def test_no_cli_module_names_llms() -> None:
    offenders = cli_kind_words(MODULES)
    assert not offenders, ("put a kind's help text on its descriptor (KindDescriptor.cli_help, composed by "
                           "edgeopt/cli/kind_help.py) instead of naming it in edgeopt/cli/:\n  "
                           + "\n  ".join(offenders))


def test_the_cli_kind_word_rule_catches_a_help_text(tmp_path: Path) -> None:
    source = ('"""A command."""\nimport click\n\n@click.option("--calib", help="an LLM recipe\'s text")\n'
              'def cmd(calib):\n    """Run it."""\n    return render_llm(calib)\n')
    module = Module("edgeopt.cli.chatty", tmp_path / "chatty.py", ast.parse(source))
    assert sorted(o.split(" ", 1)[1] for o in cli_kind_words({module.name: module})) == [
        '"an LLM recipe\'s text"', "'render_llm'"]
    other = Module("edgeopt.llm.cli.bench", tmp_path / "bench.py", ast.parse(source))
    assert cli_kind_words({other.name: other}) == []
