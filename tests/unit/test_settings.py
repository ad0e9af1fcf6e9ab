"""Typed settings: built from the public keyword options at the edge, frozen, bad values a one-line InputError."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from edgeopt.errors import InputError
from edgeopt.runners.select import choose_runner, use_runner
from edgeopt.settings import (
    MEASURE_KEYWORDS,
    EnergySettings,
    MeasureSettings,
    RemoteSpec,
    SshTimeouts,
    build,
    split_options,
)


def test_from_kwargs_takes_benchmarks_flat_energy_names():
    s = MeasureSettings.from_kwargs(iterations=50, energy=False, power_sensor="none", power_rate_hz=5.0,
                                    sysfs_root=Path("/tmp/sys"), shapes={"x": (1, 3)}, runtime_options=None)
    assert s.iterations == 50 and s.energy == EnergySettings(enabled=False, sensor="none", rate_hz=5.0,
                                                             sysfs_root="/tmp/sys")
    assert s.shapes == {"x": [1, 3]} and s.runtime_options == {}
    assert MeasureSettings() == MeasureSettings.from_kwargs()  # the defaults are edgeopt.benchmark's


def test_benchmark_keywords_match_the_public_signature():
    import inspect

    import edgeopt

    params = set(inspect.signature(edgeopt.benchmark).parameters)
    assert params >= MEASURE_KEYWORDS
    assert set(RemoteSpec.model_fields) - {"timeouts"} <= params


def test_settings_are_frozen_and_replace_validates():
    s = MeasureSettings()
    with pytest.raises(ValidationError):
        s.iterations = 3  # type: ignore[misc]
    assert s.replace(runtime="null").runtime == "null" and s.runtime is None
    with pytest.raises(InputError, match="iterations 'many'"):
        s.replace(iterations="many")


def test_a_bad_value_is_an_input_error_and_an_unknown_name_a_type_error():
    with pytest.raises(InputError, match=r"^threads 'x': .*; pass a valid value$"):
        MeasureSettings.from_kwargs(threads="x")
    with pytest.raises(TypeError, match="unexpected option.*iteratons"):
        split_options({"iteratons": 5})
    with pytest.raises(TypeError, match="hots"):
        build(RemoteSpec, {"hots": "pi@h"})


def test_split_options_separates_measurement_from_remote():
    measure, remote = split_options({"iterations": 7, "energy": False, "host": "pi@10.0.0.5", "key": "~/k"})
    assert measure.iterations == 7 and not measure.energy.enabled
    assert remote.host == "pi@10.0.0.5" and remote.key == Path("~/k") and remote.remote
    assert not RemoteSpec().remote


def test_remote_spec_carries_timeouts_to_the_ssh_runner():
    from edgeopt.runners import ssh_session

    assert ssh_session.SshTimeouts is SshTimeouts  # still importable where docs point
    spec = RemoteSpec(host="pi@10.0.0.5", timeouts=SshTimeouts(connect_s=3))
    runner = choose_runner(spec).runner
    assert runner.timeouts.connect_s == 3  # type: ignore[attr-defined]
    info = runner.describe()
    assert not info.local and info.address == "pi@10.0.0.5:22" and info.name == runner.name


def test_use_runner_keeps_a_given_runner_and_closes_one_it_built():
    closed: list[str] = []

    class Recording:
        name = "rec"

        def close(self) -> None:
            closed.append(self.name)

    given = Recording()
    with use_runner(given, RemoteSpec(host="pi@h"), "rpi5") as choice:  # type: ignore[arg-type]
        assert choice.runner is given and choice.target == "rpi5"
    assert closed == []
    with use_runner(None, RemoteSpec()) as choice:
        assert choice.runner.describe().local and choice.target is None


@pytest.mark.parametrize(("options", "key"), [
    ({"max_duration_s": float("inf")}, "max_duration_s"),
    ({"min_duration_s": float("nan")}, "min_duration_s"),
    ({"iterations": 10**30}, "iterations"),
    ({"iterations": 0}, "iterations"),
    ({"warmup_s": 1e12}, "warmup_s"),
    ({"batch": 10**9}, "batch"),
    ({"seed": 2**64}, "seed"),
    ({"pacing_fps": float("inf")}, "pacing_fps"),
    ({"power_rate_hz": float("inf")}, "rate_hz"),
])
def test_numeric_settings_are_finite_and_bounded(options, key):
    with pytest.raises(InputError) as err:
        MeasureSettings.from_kwargs(**options)
    text = str(err.value)
    assert text.startswith(key) and "\n" not in text, text


@pytest.mark.parametrize("flags", [["--max-duration", "inf"], ["--iterations", str(10**30)],
                                   ["--min-duration", "nan"]])
def test_bench_refuses_an_unbounded_number_with_exit_2(tmp_path, capsys, flags):
    from edgeopt.cli.main import main
    from tests.conftest import make_matmul_model

    model = make_matmul_model(tmp_path / "m.onnx")
    assert main(["bench", str(model), *flags]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "OverflowError" not in err and len(err.strip().splitlines()) == 1, err
