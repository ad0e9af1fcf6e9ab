"""The agent must run on the Python of real devices (3.8+, JetPack 5) and never import edgeopt."""

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

AGENT = Path(__file__).resolve().parents[3] / "device_agent" / "edgeopt_agent"
FILES = sorted(AGENT.rglob("*.py"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(AGENT).as_posix())
def test_agent_parses_as_python38_and_never_imports_edgeopt(path):
    tree = ast.parse(path.read_text(), filename=str(path), feature_version=(3, 8))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            assert not any(a.name.split(".")[0] == "edgeopt" for a in node.names), path
        if isinstance(node, ast.ImportFrom) and node.level == 0:
            assert (node.module or "").split(".")[0] != "edgeopt", path


def test_vermin_says_agent_needs_at_most_python38():
    vermin = shutil.which("vermin") or str(Path(sys.executable).parent / "vermin")
    if not Path(vermin).exists():
        pytest.skip("vermin is not installed (pip install -e .[dev])")
    out = subprocess.run(
        [vermin, "--no-tips", "--eval-annotations", "--target=3.8-", "--violations", "--backport", "typing",
         "--backport", "dataclasses", str(AGENT)],
        capture_output=True, text=True,
    )
    assert out.returncode == 0, out.stdout + out.stderr
