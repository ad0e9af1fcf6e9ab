"""Runtime option schemas (issue 20): declared once on the agent's runtime class, checked by the agent and, before
anything is sent, by the host; a typo in ``--runtime-option`` is exit 2 naming the option and the known ones."""

from __future__ import annotations

import pytest

from edgeopt.bench.fleet.api import fleet_benchmark
from edgeopt.cli.main import main
from edgeopt.errors import InputError
from edgeopt.registry import get_runtime, runtime_names
from edgeopt.runners.local import LocalRunner
from edgeopt_agent import runtimes as agent
from edgeopt_agent.runtimes.options import Option, problem
from tests.conftest import make_matmul_model


@pytest.mark.parametrize("name", [n for n in agent.names() if n != "null"])
def test_every_builtin_runtime_declares_a_schema_with_help(name):
    schema = agent.runtime_class(name).option_schema
    assert schema is not None and len({o.name for o in schema}) == len(schema)
    assert all(len(o.help) > 10 for o in schema)


def test_the_host_refuses_an_unknown_option_naming_the_known_ones():
    with pytest.raises(InputError, match=r"unknown onnxruntime option\(s\) bogus; known: execution_mode, "
                                         r"graph_optimization_level, .*static_shapes"):
        get_runtime("onnxruntime").check_options({"bogus": 1})


@pytest.mark.parametrize(("runtime", "options", "needle"), [
    ("openvino", {"performance_hint": "fast"}, "performance_hint 'FAST': use one of LATENCY, THROUGHPUT"),
    ("tflite", {"edgetpu": "yes"}, "edgetpu must be true or false"),
    ("tensorrt", {"workspace_mb": "lots"}, "workspace_mb must be an integer"),
    ("onnxruntime", {"providers": "CPUExecutionProvider"}, "providers must be a list"),
    ("onnxruntime", {"static_shapes": "yes"}, "static_shapes 'yes'"),
    ("coreml", {"compute_units": "gpu"}, "compute_units 'GPU': use one of ALL"),
])
def test_the_host_refuses_a_bad_value(runtime, options, needle):
    with pytest.raises(InputError, match="^--runtime-option: " + needle.replace("(", r"\(")):
        get_runtime(runtime).check_options(options)


def test_good_values_and_none_pass():
    get_runtime("openvino").check_options({"performance_hint": "throughput", "num_streams": 2, "device": "AUTO:GPU,CPU",
                                           "inference_precision": None, "static_shapes": False})
    get_runtime("tensorrt").check_options({"fp16": True, "batch": "4", "dla_core": 0})
    get_runtime("null").check_options({"anything": 1})  # the null runtime ignores options: no schema
    assert problem("x", None, {"a": 1}) is None and Option("n", "int", "a number").problem(True)


def test_every_host_runtime_has_a_schema_the_host_can_read():
    for name in runtime_names():
        get_runtime(name).check_options({})


def _no_agent(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the agent was started")

    for method in ("run", "probe", "evaluate"):
        monkeypatch.setattr(LocalRunner, method, refuse)


def test_cli_bench_typo_is_exit_2_without_starting_the_agent(tmp_path, monkeypatch, capsys):
    _no_agent(monkeypatch)
    model = make_matmul_model(tmp_path / "model.onnx")
    code = main(["bench", str(model), "--runtime", "onnxruntime", "--runtime-option", "bogus=1", "--no-budget"])
    assert code == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert "unknown onnxruntime option(s) bogus; known: execution_mode" in last


def test_fleet_typo_fails_before_any_device_is_selected(tmp_path):
    model = make_matmul_model(tmp_path / "model.onnx")
    with pytest.raises(InputError, match=r"unknown openvino option\(s\) hint"):
        fleet_benchmark(model, devices="no-such-device", runtime="openvino", runtime_options={"hint": "LATENCY"},
                        inventory=tmp_path / "none.yaml")
