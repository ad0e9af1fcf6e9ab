"""Remote devices: the inventory file (``devices.yaml``), ``user@host[:port]`` addresses, and device checks.

``check`` (probing a device over SSH) is imported from :mod:`edgeopt.devices.check` when used, so loading an
inventory never imports the SSH stack.
"""

from .address import parse_host
from .loader import InventoryError, default_inventory_path, load_inventory
from .schema import Device, Inventory, SshAddress

__all__ = ["Device", "Inventory", "InventoryError", "SshAddress", "default_inventory_path", "load_inventory",
           "parse_host"]
