"""Read ``devices.yaml`` into an :class:`Inventory`; every failure is one line naming the file and the key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from ..config import Settings, from_environment
from ..errors import InputError, SchemaProblem
from ..yamlio import YamlLimitError, read_text, safe_load
from .provisioned import apply_setup_state
from .schema import Inventory

DEFAULT_INVENTORY = Path("devices.yaml")
_HINT = "see docs/devices.md for the inventory format"


class InventoryError(InputError):
    """The inventory file is missing, not YAML, or does not match the schema."""


def default_inventory_path(settings: Settings | None = None) -> Path:
    """``EDGEOPT_INVENTORY`` when set, else ``./devices.yaml``."""
    settings = from_environment() if settings is None else settings
    return settings.inventory or DEFAULT_INVENTORY


def load_inventory(path: Path | None = None, *, settings: Settings | None = None,
                   setup_state: bool = True) -> Inventory:
    """Load and validate an inventory file.

    Relative ``key`` paths are taken relative to the file's directory and ``~`` is expanded, so an inventory
    works from any current directory. A device without ``python:`` that ``edgeopt devices setup`` provisioned
    gets the venv interpreter recorded in ``<stem>.state.json`` beside the file (:mod:`.provisioned`).

    Args:
        path: the file; None uses :func:`default_inventory_path`.
        settings: environment settings (default: read from the environment).
        setup_state: apply the recorded setup interpreters (False: the file's own values, as setup needs).

    Returns:
        The inventory, with ``source`` set to the file.

    Raises:
        InventoryError: the file is missing or invalid; the message names the file and the offending key.
    """
    path = Path(path) if path is not None else default_inventory_path(settings)
    try:
        text = read_text(path)
    except FileNotFoundError:
        raise InventoryError(
            f"inventory file {path} not found: create it ({_HINT}), pass --inventory FILE or set EDGEOPT_INVENTORY"
        ) from None
    except OSError as exc:
        raise InventoryError(f"{path}: cannot read the inventory file ({_one_line(str(exc))})") from None
    except YamlLimitError as exc:
        raise InventoryError(f"{path}: {exc.problem}") from None
    try:
        data: Any = safe_load(text)
    except YamlLimitError as exc:
        raise InventoryError(f"{path}: {exc.problem}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "syntax error"
        raise InventoryError(f"{path}: YAML syntax error{where}: {_one_line(problem)}; fix the YAML there") from None
    if data is None:
        data = {"devices": []}
    if not isinstance(data, dict):
        raise InventoryError(f"{path}: expected a mapping with a 'devices:' list, got a {type(data).__name__}; "
                             f"{_HINT}")
    try:
        inventory = Inventory.model_validate(data)
    except ValidationError as exc:
        raise InventoryError(f"{path}: {_first_error(exc, data)}; {_HINT}") from None
    base = path.resolve().parent
    devices = [
        d.model_copy(update={"key": _resolve_key(d.key, base)}) if d.key is not None else d for d in inventory.devices
    ]
    if setup_state:
        devices = apply_setup_state(devices, path)
    return inventory.model_copy(update={"devices": devices, "source": path})


def _resolve_key(key: Path, base: Path) -> Path:
    key = key.expanduser()
    return key if key.is_absolute() else base / key


def _first_error(exc: ValidationError, data: dict[str, Any]) -> str:
    """``key 'devices[1] (pi5).port': <msg> (got 70000)``, '(+N more)' when there are more."""
    p = SchemaProblem.of(exc)
    key, loc = p.key, p.loc
    if len(loc) >= 2 and loc[0] == "devices" and isinstance(loc[1], int):
        try:
            name = data["devices"][loc[1]].get("name")
        except (AttributeError, IndexError, KeyError, TypeError):
            name = None
        if name:
            key = key.replace(f"devices[{loc[1]}]", f"devices[{loc[1]}] ({name})", 1)
    shown = p.got if p.kind != "missing" and loc else ""
    where = f"key '{key}'" if key else "inventory"
    return f"invalid {where}: {p.msg}{shown}{p.more}"


def _one_line(text: str) -> str:
    return " ".join(text.split())
