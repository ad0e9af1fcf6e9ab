"""A missing numpy or runtime on the device is one line with the fix, exit 3, and no traceback.

The interpreter is this one, with a package on PYTHONPATH that shadows numpy (or openvino) and fails to import,
exactly as the real import fails on a board without it.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

from edgeopt_agent.protocol import ERROR_RUNTIME_MISSING, RawRun

AGENT = Path(__file__).resolve().parents[3] / "device_agent"
BLOCK = "raise ModuleNotFoundError(\"No module named '{0}'\", name='{0}')\n"


def _run_agent(tmp_path: Path, blocked: str, runtime: str) -> tuple[int, RawRun, str]:
    shadow = tmp_path / "shadow"
    (shadow / blocked).mkdir(parents=True)
    (shadow / blocked / "__init__.py").write_text(BLOCK.format(blocked))
    request = tmp_path / "request.json"
    request.write_text(json.dumps({"model_path": str(tmp_path / "m.onnx"), "runtime": runtime}))
    result = tmp_path / "result.json"
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": f"{shadow}{os.pathsep}{AGENT}"}
    lock_dir = tmp_path / "locks"
    proc = subprocess.run([sys.executable, "-m", "edgeopt_agent", "run", "--request", str(request), "--result",
                           str(result), "--lock-dir", str(lock_dir)], env=env, capture_output=True, text=True,
                          timeout=60)
    assert not lock_dir.exists() or not list(lock_dir.iterdir())  # checked before the device lock is taken
    return proc.returncode, RawRun.from_dict(json.loads(result.read_text())), proc.stderr


def test_missing_numpy_is_one_line_exit_3_no_traceback(tmp_path: Path):
    code, raw, stderr = _run_agent(tmp_path, "numpy", "onnxruntime")
    host = socket.gethostname()
    assert code == 3 and raw.error_kind == ERROR_RUNTIME_MISSING
    assert raw.error == (f"numpy is not installed for {sys.executable} on {host}: run 'edgeopt devices setup {host}' "
                         "(or: sudo apt-get install python3-numpy)")
    assert "Traceback" not in stderr and raw.environment["python_executable"] == sys.executable


def test_missing_runtime_is_one_line_with_its_install_command(tmp_path: Path):
    code, raw, stderr = _run_agent(tmp_path, "openvino", "openvino")
    host = socket.gethostname()
    assert code == 3 and raw.error_kind == ERROR_RUNTIME_MISSING and "Traceback" not in stderr
    assert raw.error.startswith(f"openvino is not installed for {sys.executable} on {host}: run 'edgeopt devices "
                                f"setup {host}' (or: pip install openvino")
