"""On-disk cache of sweep levels: one JSON file per (model sha, recipe config, target, runtime + version, eval)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from ..fsutil import atomic_write_text
from ..inbound import read_json


def cache_key(**parts: Any) -> str:
    """A stable hash of the parts (JSON with sorted keys)."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:32]


class LevelCache:
    """``<dir>/<key>.json``; ``enabled=False`` (``--no-cache``) reads nothing but still writes fresh results."""

    def __init__(self, directory: Path, *, enabled: bool = True) -> None:
        self.directory = directory
        self.enabled = enabled

    def get(self, key: str) -> dict[str, Any] | None:
        path = self.directory / f"{key}.json"
        if not self.enabled or not path.is_file():
            return None
        try:
            data = read_json(path)
        except (OSError, ValueError):
            return None  # a damaged entry is re-run
        return data if isinstance(data, dict) else None

    def put(self, key: str, value: dict[str, Any]) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        atomic_write_text(self.directory / f"{key}.json", json.dumps(value, indent=1, default=str) + "\n")
