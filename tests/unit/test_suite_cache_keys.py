"""The suite's cached wide-KV OpenVINO folder is keyed by the edgeopt files its converter runs
(tests/llm_models.py ``WIDE_KV_SOURCES``): an import of another edgeopt module would let a stale folder be reused."""

from __future__ import annotations

import ast
from pathlib import Path

import edgeopt
from tests.llm_models import WIDE_KV_SOURCES


def _edgeopt_imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:  # from .calib_windows import ...
            found.add(f"{node.module or ''}.py")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            found.update(n for n in names if n.split(".")[0] == "edgeopt")
    return found


def test_the_wide_kv_converter_imports_only_the_files_its_cache_key_reads():
    llm = Path(edgeopt.__file__).resolve().parent / "llm"
    imported = set().union(*(_edgeopt_imports(llm / name) for name in WIDE_KV_SOURCES))
    assert imported <= set(WIDE_KV_SOURCES), imported - set(WIDE_KV_SOURCES)
