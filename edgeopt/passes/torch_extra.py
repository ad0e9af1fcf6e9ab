"""Whether the PyTorch extra is installed, checked without importing torch (pass availability must stay cheap)."""

from __future__ import annotations

import importlib.util

TORCH_MODULES = ("torch", "onnxscript")
PRUNING_MODULES = ("torch_pruning",)
# Distribution names to put in the message, where they differ from the module names.
_DIST_NAMES = {"torch_pruning": "torch-pruning"}


def torch_unavailable(pass_name: str, *, pruning: bool = False) -> str | None:
    """Why a PyTorch-side pass cannot run here (None when it can), with the install command."""
    wanted = TORCH_MODULES + (PRUNING_MODULES if pruning else ())
    missing = [_DIST_NAMES.get(m, m) for m in wanted if importlib.util.find_spec(m) is None]
    if missing:
        return f"pass '{pass_name}' needs {', '.join(missing)}: pip install 'edgeopt[torch]'"
    return None
