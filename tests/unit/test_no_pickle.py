"""edgeopt and its agent never unpickle user data: every ``np.load`` passes ``allow_pickle=False`` literally, and
no module imports ``pickle`` (a ``.npz`` or ``.npy`` from a user can carry a pickle that runs code when loaded)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.unit.architecture.source import AGENT_MODULES, MODULES

ROOT = Path(__file__).resolve().parents[2]
# the trees the architecture checks parsed already (edgeopt/ and device_agent/edgeopt_agent/, where all of the
# agent's Python is): parsing the ~470 files again cost each pytest process ~4 s of collection
TREES = {m.path: m.tree for m in (*MODULES.values(), *AGENT_MODULES.values())}
SOURCES = sorted(TREES)


def _np_loads(tree: ast.AST) -> list[ast.Call]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and n.func.attr == "load" and isinstance(n.func.value, ast.Name) and n.func.value.id in ("np", "numpy")]


def test_every_np_load_refuses_pickles() -> None:
    found, bad = 0, []
    for path in SOURCES:
        for call in _np_loads(TREES[path]):
            found += 1
            flag = next((k.value for k in call.keywords if k.arg == "allow_pickle"), None)
            if not (isinstance(flag, ast.Constant) and flag.value is False):
                bad.append(f"{path.relative_to(ROOT)}:{call.lineno}")
    # the scan sees the loaders: edgeopt's one reader (edgeopt/inbound.py: calibration, eval and retention arrays),
    # the TFLite driver and the agent's inputs
    assert found >= 3
    assert not bad, f"np.load without allow_pickle=False: {bad}"


def test_nothing_imports_pickle() -> None:
    bad = []
    for path in SOURCES:
        for node in ast.walk(TREES[path]):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(n.split(".")[0] in ("pickle", "cPickle", "dill", "joblib") for n in names):
                bad.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not bad, bad
