"""Untrusted bytes enter through one reader (issue 31): no raw ``json.load``/``yaml.load``/``model_validate_json``
outside :mod:`edgeopt.inbound`, :mod:`edgeopt.jsonio`, :mod:`edgeopt.yamlio` and the listed exceptions."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.unit.architecture.source import (
    MODULES,
    Module,
)

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
