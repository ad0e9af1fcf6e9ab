"""One template run against every runner: the same agent commands, the same results, whatever the transport.

A runner is listed once in ``RUNNERS`` (a name and a factory that may use fixtures) and then has to pass every test
here: ``describe``, ``run`` (with progress), ``evaluate`` (outputs fetched to the host path), ``profile``,
``probe``, an agent error coming back as data, ``close``, and use through ``edgeopt.benchmark`` and the sweep's
runtime check. The SSH runner runs against the real loopback sshd of ``tests/integration/ssh`` (skipped where sshd
cannot run).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import onnx
import pytest

import edgeopt
from edgeopt.errors import InputError
from edgeopt.evaluation import device_outputs
from edgeopt.runners import LocalRunner, Runner, RunnerKind, raise_for_error
from edgeopt.sweep.api import available_runtimes
from edgeopt.zoo import build
from edgeopt_agent.protocol import RawRun, Request
from tests.integration.ssh.conftest import shared_device  # noqa: F401 - the loopback sshd fixture

RunnerFactory = Callable[[pytest.FixtureRequest], Runner]

# Every runner the contract applies to. A new runner (e.g. a fleet) is added here and runs the whole template.
RUNNERS: dict[str, RunnerFactory] = {
    "local": lambda request: LocalRunner(),
    "served": lambda request: LocalRunner().serving(),  # one agent process answering every request
    "ssh": lambda request: request.getfixturevalue("shared_device").runner(),
    # one agent on the device, on one SSH channel, answering every request
    "ssh-served": lambda request: request.getfixturevalue("shared_device").runner().serving(),
}
FAST = {"iterations": 20, "min_duration_s": 0.05, "warmup": 1}


@pytest.fixture(params=list(RUNNERS), scope="module")
def runner(request: pytest.FixtureRequest) -> Iterator[Runner]:
    made = RUNNERS[request.param](request)
    yield made
    made.close()


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build("mobilenet-tiny", tmp_path_factory.mktemp("contract") / "mobilenet-tiny.onnx")


@pytest.fixture(scope="module")
def local_raw(model: Path) -> RawRun:
    return LocalRunner().run(Request(model_path="", **FAST), model)


def test_describe_names_the_runner_without_contacting_it(runner: Runner) -> None:
    info = runner.describe()
    assert info.name == runner.name and info.kind in set(RunnerKind)
    assert info.address and info.python
    assert info.local is (info.kind is RunnerKind.LOCAL)


def test_run_returns_the_same_raw_run_as_the_local_agent(runner: Runner, model: Path, local_raw: RawRun) -> None:
    events: list[dict] = []
    raw = runner.run(Request(model_path="ignored", progress_interval_s=0.1, **FAST), model, events.append)
    assert raw.ok, raw.error
    assert set(raw.to_dict()) == set(local_raw.to_dict()) and len(raw.samples_ns) >= FAST["iterations"]
    assert [e["phase"] for e in events if e.get("event") == "phase" and e["phase"] != "upload"] == \
        ["load", "warmup", "timed"]
    assert raw.outputs == local_raw.outputs


def test_evaluate_writes_the_outputs_to_the_host_path(runner: Runner, model: Path, tmp_path: Path) -> None:
    name = onnx.load(str(model)).graph.input[0].name
    x = np.random.default_rng(0).standard_normal((3, 1, 3, 32, 32)).astype(np.float32)
    np.savez(tmp_path / "eval.npz", **{name: x[:, 0]})
    outs, names, raw = device_outputs(model, tmp_path / "eval.npz", runtime="onnxruntime", runner=runner)
    local, local_names, _ = device_outputs(model, tmp_path / "eval.npz", runtime="onnxruntime", runner=LocalRunner())
    assert names == local_names and raw.timed_inferences == 3
    np.testing.assert_allclose(outs[0], local[0], rtol=1e-5, atol=1e-6)


def test_profile_returns_per_layer_times_mapped_to_the_graph(runner: Runner, model: Path) -> None:
    raw = runner.profile(Request(model_path="ignored", runtime="onnxruntime", warmup=2, iterations=5,
                                 min_duration_s=0, energy={"enabled": False}), model)
    assert raw.ok, raw.error
    layers = raw.profile["layers"]
    nodes = {n.name for n in onnx.load(str(model)).graph.node}
    assert layers and any(set(layer.get("original_names") or [layer["name"]]) & nodes for layer in layers)


def test_probe_reports_the_runtimes_where_the_agent_runs(runner: Runner) -> None:
    facts = runner.probe()
    assert {"agent_version", "environment", "runtimes", "packages"} <= set(facts)
    assert facts["runtimes"]["onnxruntime"]["available"] is True and facts["runtimes"]["null"]["available"] is True
    assert set(available_runtimes(runner, ["onnxruntime", "null", "no-such-runtime"])) == {"onnxruntime", "null"}


def test_a_probe_limited_to_some_runtimes_reports_only_those(runner: Runner) -> None:
    """What a sweep asks (its runtimes only: each runtime the agent probes costs an import there)."""
    facts = runner.probe(["onnxruntime", "no-such-runtime"])
    assert set(facts["runtimes"]) == {"onnxruntime"} and facts["runtimes"]["onnxruntime"]["available"] is True
    assert facts["environment"]["cores"] >= 1


def test_an_agent_error_comes_back_as_data(runner: Runner, model: Path) -> None:
    raw = runner.run(Request(model_path="", shapes={"nope": [1]}, **FAST), model)
    assert not raw.ok and raw.error_kind == "input"
    with pytest.raises(InputError, match="nope"):
        raise_for_error(raw, runner.name)


def test_benchmark_through_the_runner_names_it(runner: Runner, model: Path) -> None:
    # 100 iterations: the p99 validity needs 100 samples, and FAST's 0.05 s gives fewer on a loaded machine
    result = edgeopt.benchmark(model, runner=runner, use_target_fps=False, energy=False, **{**FAST, "iterations": 100})
    assert result.runner == runner.name and result.valid and result.latency_ms.p50 > 0


def test_close_is_idempotent(runner: Runner) -> None:
    runner.close()
    runner.close()
    assert runner.describe().name == runner.name
