"""The agent's "missing dependency" line, with the inventory's device name in its fix.

The agent names the device by its host name (it cannot know the inventory's name):
``numpy is not installed for /usr/bin/python3 on pi-host: run 'edgeopt devices setup pi-host' (...)``. Where
the host knows the inventory name, it puts that name in the suggested command.
"""

from __future__ import annotations

import re

_SETUP = re.compile(r"run 'edgeopt devices setup [^']*'")


def name_device_in_hint(message: str, device: str) -> str:
    """``message`` with its ``edgeopt devices setup`` suggestion naming ``device``."""
    return _SETUP.sub(f"run 'edgeopt devices setup {device}'", message, count=1)
