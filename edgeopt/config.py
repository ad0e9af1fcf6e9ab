"""The one place where edgeopt reads its environment variables.

Everything else receives these values as arguments, so behaviour never depends on hidden global state.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

ENV_TARGETS_DIR = "EDGEOPT_TARGETS_DIR"
ENV_INVENTORY = "EDGEOPT_INVENTORY"
ENV_HISTORY_DB = "EDGEOPT_HISTORY_DB"
ENV_TOOLS_DIR = "EDGEOPT_TOOLS_DIR"
# Also read by the agent (edgeopt_agent.runtimes), which cannot import this module; the local runner passes it on.
ENV_PLUGIN_PATH = "EDGEOPT_PLUGIN_PATH"
ENV_WHEELS_DIR = "EDGEOPT_WHEELS_DIR"
ENV_RAY_ADDRESS = "RAY_ADDRESS"
ENV_LOCK_DIR = "EDGEOPT_LOCK_DIR"


@dataclass(frozen=True)
class Settings:
    """Settings taken from the environment.

    Attributes:
        targets_dirs: extra directories of target YAML files (``EDGEOPT_TARGETS_DIR``, ``os.pathsep``-separated).
        inventory: the devices inventory file (``EDGEOPT_INVENTORY``; None: ``./devices.yaml``).
        history_db: the results history (``EDGEOPT_HISTORY_DB``; else ``$XDG_DATA_HOME/edgeopt/history.sqlite3``,
            ``XDG_DATA_HOME`` defaulting to ``~/.local/share``).
        tools_dir: isolated tool environments (``EDGEOPT_TOOLS_DIR``; else ``$XDG_CACHE_HOME/edgeopt/tools``,
            ``XDG_CACHE_HOME`` defaulting to ``~/.cache``).
        plugin_path: directories holding plug-in distributions that are not installed (``EDGEOPT_PLUGIN_PATH``,
            ``os.pathsep``-separated): each directory is put on ``sys.path`` so the entry points of the
            ``*.dist-info`` folders in it count like installed ones (:mod:`edgeopt.registry.plugins`).
        wheels_dir: wheels downloaded for devices by ``edgeopt devices setup --offline`` (``EDGEOPT_WHEELS_DIR``;
            else ``$XDG_CACHE_HOME/edgeopt/wheels``).
        ray_address: the Ray cluster ``--executor ray`` joins (``RAY_ADDRESS``, Ray's own variable; None: a local
            cluster is started for the run).
        lock_dir: where local runs take this machine's lock (``EDGEOPT_LOCK_DIR``; else
            ``$XDG_CACHE_HOME/edgeopt/locks``): one local measurement at a time, like a device's lock.
    """

    targets_dirs: tuple[Path, ...] = ()
    inventory: Path | None = None
    history_db: Path | None = None
    tools_dir: Path | None = None
    plugin_path: tuple[Path, ...] = ()
    wheels_dir: Path | None = None
    ray_address: str | None = None
    lock_dir: Path | None = None


def from_environment(environ: dict[str, str] | None = None) -> Settings:
    """Read edgeopt's settings from ``environ`` (default: ``os.environ``)."""
    env = os.environ if environ is None else environ
    raw = env.get(ENV_TARGETS_DIR, "")
    dirs = tuple(Path(p).expanduser() for p in raw.split(os.pathsep) if p.strip())
    inventory = env.get(ENV_INVENTORY, "").strip()
    history = env.get(ENV_HISTORY_DB, "").strip()
    data_home = env.get("XDG_DATA_HOME", "").strip() or str(Path(env.get("HOME") or Path.home()) / ".local" / "share")
    history_db = Path(history).expanduser() if history else Path(data_home) / "edgeopt" / "history.sqlite3"
    tools = env.get(ENV_TOOLS_DIR, "").strip()
    cache_home = env.get("XDG_CACHE_HOME", "").strip() or str(Path(env.get("HOME") or Path.home()) / ".cache")
    tools_dir = Path(tools).expanduser() if tools else Path(cache_home) / "edgeopt" / "tools"
    plugins = tuple(Path(p).expanduser() for p in env.get(ENV_PLUGIN_PATH, "").split(os.pathsep) if p.strip())
    wheels = env.get(ENV_WHEELS_DIR, "").strip()
    wheels_dir = Path(wheels).expanduser() if wheels else Path(cache_home) / "edgeopt" / "wheels"
    ray_address = env.get(ENV_RAY_ADDRESS, "").strip() or None
    locks = env.get(ENV_LOCK_DIR, "").strip()
    lock_dir = Path(locks).expanduser() if locks else Path(cache_home) / "edgeopt" / "locks"
    return Settings(targets_dirs=dirs, inventory=Path(inventory).expanduser() if inventory else None,
                    history_db=history_db, tools_dir=tools_dir, plugin_path=plugins, wheels_dir=wheels_dir,
                    ray_address=ray_address, lock_dir=lock_dir)
