"""bench refuses option combinations it cannot honour (a trade-off on the fleet, --mlflow with several runs)
instead of silently dropping one of them."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgeopt.cli.bench_many import check_combination
from edgeopt.cli.fleet_options import FleetOptions
from edgeopt.cli.main import main
from edgeopt.errors import InputError

ONE = FleetOptions()
FLEET = FleetOptions(devices="tag:rpi5")


@pytest.mark.parametrize("model,fleet,tradeoff,mlflow,needle", [
    ("m.onnx", FLEET, True, False, "--devices takes one --batch and one --threads value"),
    ("m.onnx", FLEET, False, True, "--mlflow logs one run; with --devices"),
    ("manifest.json", ONE, False, True, "with a manifest"),
    ("m.onnx", ONE, True, True, "with several --batch/--threads values"),
])
def test_refused_combinations_name_the_options(model, fleet, tradeoff, mlflow, needle):
    with pytest.raises(InputError, match=needle.replace("-", r"\-")):
        check_combination(Path(model), fleet=fleet, tradeoff=tradeoff, mlflow=mlflow)


def test_allowed_combinations_pass():
    check_combination(Path("m.onnx"), fleet=ONE, tradeoff=True, mlflow=False)
    check_combination(Path("m.onnx"), fleet=FLEET, tradeoff=False, mlflow=False)
    check_combination(Path("m.onnx"), fleet=ONE, tradeoff=False, mlflow=True)


def test_bench_cli_exits_2_for_a_fleet_tradeoff(tmp_path, capsys):
    model = tmp_path / "m.onnx"
    model.write_bytes(b"not read: refused before any work")
    code = main(["bench", str(model), "--devices", "tag:rpi5", "--batch", "1,2", "--no-history"])
    assert code == 2
    assert "--devices takes one --batch" in capsys.readouterr().err
