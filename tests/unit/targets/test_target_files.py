"""Every shipped target file validates, is named after its file, and says where each number comes from."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgeopt.enums import PowerSensor
from edgeopt.names import RuntimeName
from edgeopt.targets import Sourced, Target
from edgeopt.targets.loader import load_target_file
from edgeopt.targets.registry import REPO_TARGETS_DIR

SHIPPED = sorted(REPO_TARGETS_DIR.glob("*.yaml"))
EXPECTED = {
    "local",
    "jetson-orin-nano",
    "jetson-orin-nx",
    "jetson-agx-orin",
    "jetson-nano",
    "rpi4",
    "rpi5",
    "coral-devboard",
    "coral-usb",
    "intel-nuc",
    "mac-m-series",
}
# A source either derives the number ("estimate: ...") or names the document it was read from.
SOURCE_MARKERS = (
    "estimate:",
    "assumption:",
    "measured:",
    "configuration:",
    "datasheet",
    "product brief",
    "docs",
    "Intel ARK",
)


def _load(name: str) -> Target:
    return load_target_file(REPO_TARGETS_DIR / f"{name}.yaml")


def test_shipped_set_is_complete() -> None:
    assert {p.stem for p in SHIPPED} == EXPECTED


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_shipped_target_validates_and_matches_stem(path: Path) -> None:
    target = load_target_file(path)
    assert target.name == path.stem
    assert target.default_fps is not None


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_every_number_has_a_source(path: Path) -> None:
    target = load_target_file(path)
    numbers = {name: value for name, value in target if isinstance(value, Sourced)}
    assert numbers or target.detect
    for name, sourced in numbers.items():
        assert sourced.source.strip(), f"{path.name}: {name} has an empty source"
        assert any(m in sourced.source for m in SOURCE_MARKERS), f"{path.name}: {name}: {sourced.source}"


def test_runtime_and_power_conventions() -> None:
    for name in ("jetson-orin-nano", "jetson-orin-nx", "jetson-agx-orin", "jetson-nano"):
        target = _load(name)
        assert target.runtimes[:2] == [RuntimeName.TENSORRT, RuntimeName.ONNXRUNTIME]
        assert target.power_sensor is PowerSensor.INA3221
    for name, sensor in (("rpi4", PowerSensor.NONE), ("rpi5", PowerSensor.RPI5_PMIC)):
        assert _load(name).runtimes == [RuntimeName.TFLITE, RuntimeName.ONNXRUNTIME]
        assert _load(name).power_sensor is sensor
    for name in ("coral-devboard", "coral-usb"):
        assert _load(name).runtimes == [RuntimeName.TFLITE]
        assert _load(name).power_sensor is PowerSensor.NONE
    nuc = _load("intel-nuc")
    assert nuc.runtimes == [RuntimeName.OPENVINO, RuntimeName.ONNXRUNTIME]
    assert nuc.power_sensor is PowerSensor.RAPL


def test_jetson_int8_numbers_are_dense() -> None:
    orin_nano = _load("jetson-orin-nano").peak_int8_tops
    assert orin_nano is not None and orin_nano.value == 20 and "sparse" in orin_nano.source


def test_local_is_detect_only() -> None:
    local = _load("local")
    assert local.detect
    assert local.peak_fp32_tflops is None and local.memory_gb is None
    assert local.runtimes == [RuntimeName.ONNXRUNTIME, RuntimeName.OPENVINO]


def test_docs_list_every_shipped_target() -> None:
    docs = (REPO_TARGETS_DIR.parent / "docs" / "targets.md").read_text()
    missing = [p.stem for p in SHIPPED if f"| `{p.stem}` |" not in docs]
    assert not missing, f"docs/targets.md has no table row for {missing}"


def test_a_file_text_is_parsed_once_and_an_edit_is_read_anew(tmp_path: Path) -> None:
    """The registry loads every file on every benchmark call: a process parses each text once (edgeopt/targets/
    loader.py), and a file edited since is new text, validated again."""
    from edgeopt.errors import TargetError
    from edgeopt.targets import loader

    path = tmp_path / "rpi5.yaml"
    path.write_text((REPO_TARGETS_DIR / "rpi5.yaml").read_text())
    first = load_target_file(path)
    parsed = loader._parsed_once.cache_info().misses
    assert load_target_file(path) == first and loader._parsed_once.cache_info().misses == parsed  # not parsed again
    path.write_text(path.read_text().replace("name: rpi5", "name: rpi5\n# edited"))
    assert load_target_file(path) == first and loader._parsed_once.cache_info().misses == parsed + 1
    path.write_text(path.read_text().replace("name: rpi5", "name: rpi6"))
    with pytest.raises(TargetError, match="does not match the file name"):
        load_target_file(path)
