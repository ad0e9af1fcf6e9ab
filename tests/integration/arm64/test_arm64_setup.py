"""``edgeopt devices setup --offline`` provisions the emulated arm64 board, then ``bench`` runs there without --python.

For this module the board's Debian Python is made bare (the wheels layer's ``.pth`` is set aside and restored
afterwards), so numpy and onnxruntime must come from setup: the host downloads aarch64 cp311 wheels for the
board's glibc (``pip download --platform manylinux_2_NN_aarch64 ...``), pushes them over SFTP and installs them
into ``<workdir>/venv`` with ``--no-index``. qemu-user makes pip slow here (minutes).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from edgeopt.cli.main import main
from tests.integration.arm64 import rootfs as rfs

pytestmark = [pytest.mark.arm64, pytest.mark.slow]
WORKDIR = "/root/.cache/edgeopt-setup-test"


@pytest.fixture()
def bare_board(arm64_board, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An inventory naming the board without python:, its system Python without numpy (restored afterwards)."""
    pth = arm64_board.rootfs / rfs.PTH
    hidden = pth.with_name(pth.name + ".hidden-by-setup-test")
    board = arm64_board.board
    inventory = tmp_path / "devices.yaml"
    inventory.write_text(yaml.safe_dump({"devices": [{
        "name": "arm64-board", "host": "10.201.0.2", "port": 22, "user": "root", "key": str(board.client_key),
        "target": "rpi5", "workdir": WORKDIR, "tags": ["arm64"]}]}))
    monkeypatch.setenv("EDGEOPT_WHEELS_DIR", str(tmp_path / "wheels"))
    pth.rename(hidden)
    try:
        yield inventory
    finally:
        hidden.rename(pth)
        shutil.rmtree(arm64_board.rootfs / WORKDIR.lstrip("/"), ignore_errors=True)


def test_offline_setup_on_arm64_then_bench_without_python(arm64_board, bare_board: Path, tmp_path: Path, capsys):
    known = ["--inventory", str(bare_board), "--known-hosts", str(arm64_board.board.known_hosts),
             "--accept-new-host-key"]
    assert main(["devices", "setup", "arm64-board", "--offline", "--runtimes", "onnxruntime", "--json", *known]) == 0
    report = json.loads(capsys.readouterr().out)["devices"][0]["report"]
    assert report["arch"] == "aarch64" and report["mode"] == "offline"
    assert report["python"] == f"{WORKDIR}/venv/bin/python" and report["packages"]["numpy"]
    assert list((tmp_path / "wheels").glob("cp311-aarch64-glibc2.*/numpy-*aarch64*.whl"))
    model = tmp_path / "m.onnx"
    import edgeopt.zoo

    edgeopt.zoo.build("mobilenet-tiny", model)
    code = main(["bench", str(model), "--device", "arm64-board", "-n", "10", "--min-duration", "0.2", "--warmup", "2",
                 "--no-energy", "--no-history", "--json", "--inventory", str(bare_board), "--known-hosts",
                 str(arm64_board.board.known_hosts)])
    result = json.loads(capsys.readouterr().out)
    assert code in (0, 1) and result["environment"]["python_executable"] == f"{WORKDIR}/venv/bin/python"
    assert result["environment"]["machine"] == "aarch64" and result["run"]["samples"] >= 10
