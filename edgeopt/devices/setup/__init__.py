"""``edgeopt devices setup``: a venv with numpy and the target's runtimes on a device (docs/fleet.md)."""

from .api import SetupReport, setup_device
from .packages import parse_runtimes

__all__ = ["SetupReport", "parse_runtimes", "setup_device"]
