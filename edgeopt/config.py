"""The one place where edgeopt reads its environment variables.

Everything else receives these values as arguments, so behaviour never depends on hidden global state.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

ENV_TARGETS_DIR = "EDGEOPT_TARGETS_DIR"


@dataclass(frozen=True)
class Settings:
    """Settings taken from the environment.

    Attributes:
        targets_dirs: extra directories of target YAML files (``EDGEOPT_TARGETS_DIR``, ``os.pathsep``-separated).
    """

    targets_dirs: tuple[Path, ...] = ()


def from_environment(environ: dict[str, str] | None = None) -> Settings:
    """Read edgeopt's settings from ``environ`` (default: ``os.environ``)."""
    env = os.environ if environ is None else environ
    raw = env.get(ENV_TARGETS_DIR, "")
    dirs = tuple(Path(p).expanduser() for p in raw.split(os.pathsep) if p.strip())
    return Settings(targets_dirs=dirs)
