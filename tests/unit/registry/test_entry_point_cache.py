"""``registry.plugins.entry_points`` reads the installed distributions once per ``sys.path`` state (every
benchmark, optimize and profile call asks), and again when a distribution is added where Python looks."""

from __future__ import annotations

import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from edgeopt.registry import plugins

GROUP = "edgeopt.test_cache_group"


def test_the_scan_is_kept_until_a_distribution_comes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = metadata.entry_points

    def counting(**kw: Any) -> Any:
        calls.append(kw["group"])
        return real(**kw)

    monkeypatch.setattr(plugins.metadata, "entry_points", counting)
    monkeypatch.setattr(sys, "path", [*sys.path, str(tmp_path)])
    assert plugins.entry_points(GROUP) == [] and plugins.entry_points(GROUP) == []
    assert calls == [GROUP]  # the second answer was the kept one
    dist = tmp_path / "late_plugin-1.0.dist-info"  # a plug-in installed where Python looks
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: late-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(f"[{GROUP}]\nlate = late_mod:thing\n")
    assert [e.name for e in plugins.entry_points(GROUP)] == ["late"] and calls == [GROUP, GROUP]
