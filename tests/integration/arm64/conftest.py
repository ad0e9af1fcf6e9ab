"""Session fixture: the emulated arm64 board (cached Debian 12 rootfs, its sshd chrooted in a namespace).

Skips, with the reason, when this machine cannot host it: not root, no debootstrap/qemu-user-static, binfmt_misc
cannot be registered, or offline on a cold cache. The first run builds the rootfs (minutes); later runs reuse it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.integration.arm64 import rootfs as rfs
from tests.integration.arm64.board import Board


@dataclass
class Arm64Board:
    board: Board
    rootfs: Path
    built: list[str] = field(default_factory=list)
    python: str = rfs.DEVICE_PYTHON


@pytest.fixture(scope="session")
def arm64_board(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Arm64Board]:
    try:
        rfs.preflight()
        start = time.monotonic()
        path, built = rfs.ensure_rootfs()
    except rfs.Unavailable as exc:
        pytest.skip(str(exc))
    board = Board(path, tmp_path_factory.mktemp("arm64-client"))
    try:
        board.start()
        built.append(f"rootfs ready + sshd up in {time.monotonic() - start:.0f} s")
        yield Arm64Board(board, path, built)
    finally:
        board.stop()
