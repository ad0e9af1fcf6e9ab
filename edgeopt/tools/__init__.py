"""Isolated tool environments edgeopt creates and manages (``edgeopt tools``): converters whose dependencies
conflict with the core environment (TensorFlow pins protobuf < 6 and numpy < 2) run in their own venv as a
subprocess."""

from __future__ import annotations

from .manager import TOOLS, ToolNotInstalledError, ToolStatus, install_tool, run_tool, tool_status

__all__ = ["TOOLS", "ToolNotInstalledError", "ToolStatus", "install_tool", "run_tool", "tool_status"]
