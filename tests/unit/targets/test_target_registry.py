"""The target registry: built-ins plus user directories, and a one-line TargetError for every bad input."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from edgeopt.config import ENV_TARGETS_DIR, Settings, from_environment
from edgeopt.errors import TargetError
from edgeopt.targets import Target, TargetRegistry, load_registry
from edgeopt.targets import registry as registry_module
from edgeopt.targets.loader import load_target_file
from edgeopt.targets.registry import REPO_TARGETS_DIR

NO_ENV = Settings()


def _target_data(name: str, **overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": name,
        "description": "A test board",
        "arch": "aarch64",
        "accelerator": "npu",
        "peak_int8_tops": {"value": 6, "source": "estimate: test"},
        "memory_gb": {"value": 4, "source": "test datasheet"},
        "memory_bandwidth_gbps": {"value": 17, "source": "test datasheet"},
        "tdp_w": {"value": 8, "source": "test datasheet"},
        "runtimes": ["tflite"],
        "precisions": ["int8"],
    }
    data.update(overrides)
    return data


def _write(directory: Path, name: str, stem: str | None = None, **overrides: Any) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{stem or name}.yaml"
    path.write_text(yaml.safe_dump(_target_data(name, **overrides), sort_keys=False))
    return path


def _error(extra_dirs: list[Path], settings: Settings = NO_ENV) -> str:
    with pytest.raises(TargetError) as info:
        load_registry(extra_dirs, settings)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_builtins_load() -> None:
    registry = load_registry(settings=NO_ENV)
    assert {"local", "rpi5", "jetson-orin-nano", "coral-usb"} <= set(registry.names())
    assert registry.names() == sorted(registry.names())
    assert registry.path("rpi5") == REPO_TARGETS_DIR / "rpi5.yaml"
    assert "rpi5" in registry and len(registry) == len(list(registry))
    assert all(isinstance(t, Target) for t in registry.all())


def test_local_comes_back_detected_once() -> None:
    calls: list[str] = []

    def fake_detect(base: Target) -> Target:
        calls.append(base.name)
        return base.model_copy(update={"description": "detected"})

    rpi5 = load_target_file(REPO_TARGETS_DIR / "rpi5.yaml")
    local = load_target_file(REPO_TARGETS_DIR / "local.yaml")
    registry = TargetRegistry(
        {"local": (local, REPO_TARGETS_DIR / "local.yaml"), "rpi5": (rpi5, REPO_TARGETS_DIR / "rpi5.yaml")},
        detector=fake_detect,
    )
    assert registry.get("local").description == "detected"
    assert registry.get("local").description == "detected"
    assert calls == ["local"]
    assert registry.get("rpi5") is rpi5


def test_local_is_detected_by_default() -> None:
    local = load_registry(settings=NO_ENV).get("local")
    assert local.description.startswith("local: ")
    assert local.peak_fp32_tflops is not None


def test_user_dir_via_extra_dirs(tmp_path: Path) -> None:
    _write(tmp_path / "mine", "my-board")
    registry = load_registry([tmp_path / "mine"], NO_ENV)
    assert registry.get("my-board").accelerator == "npu"
    assert registry.path("my-board") == tmp_path / "mine" / "my-board.yaml"


def test_user_dir_via_settings_from_environment(tmp_path: Path) -> None:
    _write(tmp_path / "a", "board-a")
    _write(tmp_path / "b", "board-b")
    settings = from_environment({ENV_TARGETS_DIR: f"{tmp_path / 'a'}:{tmp_path / 'b'}"})
    registry = load_registry(settings=settings)
    assert {"board-a", "board-b"} <= set(registry.names())


def test_default_settings_read_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write(tmp_path, "env-board")
    monkeypatch.setenv(ENV_TARGETS_DIR, str(tmp_path))
    assert "env-board" in load_registry()


def test_same_dir_from_env_and_cli_is_not_a_duplicate(tmp_path: Path) -> None:
    _write(tmp_path, "my-board")
    registry = load_registry([tmp_path], Settings(targets_dirs=(tmp_path,)))
    assert "my-board" in registry


def test_unknown_target_suggests_close_name() -> None:
    registry = load_registry(settings=NO_ENV)
    with pytest.raises(TargetError) as info:
        registry.get("jetson-orin-nan")
    message = str(info.value)
    assert "unknown target 'jetson-orin-nan'" in message
    assert "did you mean 'jetson-orin-nano'?" in message
    assert "rpi5" in message and "--targets-dir" in message and "\n" not in message
    with pytest.raises(TargetError, match="did you mean"):
        registry.path("rpi55")


def test_unknown_target_without_close_match() -> None:
    with pytest.raises(TargetError) as info:
        load_registry(settings=NO_ENV).get("zzzzzz")
    assert "did you mean" not in str(info.value)


def test_yaml_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "broken.yaml").write_text("name: broken\nruntimes: [tflite\nprecisions: [int8]\n")
    message = _error([tmp_path])
    assert "broken.yaml" in message and "line 3" in message and "YAML syntax" in message


def test_schema_error_names_file_and_key(tmp_path: Path) -> None:
    _write(tmp_path, "bad-runtime", runtimes=["tflite", "tensorflow"])
    message = _error([tmp_path])
    assert "bad-runtime.yaml" in message and "runtimes[1]" in message and "'tensorflow'" in message


def test_schema_error_nested_key(tmp_path: Path) -> None:
    _write(tmp_path, "bad-number", tdp_w={"value": -1, "source": "datasheet"})
    message = _error([tmp_path])
    assert "bad-number.yaml" in message and "tdp_w.value" in message and "greater than 0" in message


def test_unknown_key_is_rejected(tmp_path: Path) -> None:
    _write(tmp_path, "extra-key", colour="red")
    message = _error([tmp_path])
    assert "extra-key.yaml" in message and "'colour'" in message


def test_missing_hardware_numbers(tmp_path: Path) -> None:
    _write(tmp_path, "no-numbers", memory_gb=None, tdp_w=None)
    message = _error([tmp_path])
    assert "no-numbers.yaml" in message and "memory_gb" in message


def test_missing_required_key(tmp_path: Path) -> None:
    path = _write(tmp_path, "no-arch")
    data = yaml.safe_load(path.read_text())
    del data["arch"]
    path.write_text(yaml.safe_dump(data))
    message = _error([tmp_path])
    assert "no-arch.yaml" in message and "key 'arch'" in message and "Field required" in message


@pytest.mark.parametrize("content", ["", "- just\n- a list\n"])
def test_non_mapping_file(tmp_path: Path, content: str) -> None:
    (tmp_path / "odd.yaml").write_text(content)
    assert "odd.yaml" in _error([tmp_path])


def test_stem_must_equal_name(tmp_path: Path) -> None:
    _write(tmp_path, "board-x", stem="board-y")
    message = _error([tmp_path])
    assert "board-y.yaml" in message and "'board-x'" in message and "rename" in message


def test_user_target_may_not_shadow_builtin(tmp_path: Path) -> None:
    _write(tmp_path, "rpi5")
    message = _error([tmp_path])
    assert str(REPO_TARGETS_DIR / "rpi5.yaml") in message and str(tmp_path / "rpi5.yaml") in message
    assert "defined twice" in message


def test_duplicate_across_user_dirs(tmp_path: Path) -> None:
    _write(tmp_path / "a", "twin")
    _write(tmp_path / "b", "twin")
    message = _error([tmp_path / "a", tmp_path / "b"])
    assert str(tmp_path / "a" / "twin.yaml") in message and str(tmp_path / "b" / "twin.yaml") in message


def test_missing_targets_dir(tmp_path: Path) -> None:
    message = _error([tmp_path / "nope"])
    assert str(tmp_path / "nope") in message and "--targets-dir" in message


def test_missing_targets_dir_from_environment(tmp_path: Path) -> None:
    settings = from_environment({ENV_TARGETS_DIR: str(tmp_path / "gone")})
    assert str(tmp_path / "gone") in _error([], settings)


def test_targets_dir_that_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "file.yaml").write_text("name: x\n")
    assert "not a directory" in _error([tmp_path / "file.yaml"])


def test_hidden_and_other_files_are_ignored(tmp_path: Path) -> None:
    (tmp_path / ".#my-board.yaml").write_text("{{{")
    (tmp_path / "README.md").write_text("# notes")
    _write(tmp_path, "my-board")
    assert "my-board" in load_registry([tmp_path], NO_ENV)


class _FakeEntryPoint:
    def __init__(self, name: str, func: Any) -> None:
        self.name, self.value, self._func = name, f"fake_pkg:{name}", func

    def load(self) -> Any:
        return self._func


def test_entry_point_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write(tmp_path, "plugin-board")
    fake = [_FakeEntryPoint("boards", lambda: str(tmp_path))]
    monkeypatch.setattr(registry_module.metadata, "entry_points", lambda group: fake)
    assert "plugin-board" in load_registry(settings=NO_ENV)


def test_broken_entry_point_names_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom() -> str:
        raise RuntimeError("no data")

    monkeypatch.setattr(
        registry_module.metadata, "entry_points", lambda group: [_FakeEntryPoint("bad", boom)]
    )
    message = _error([])
    assert "fake_pkg:bad" in message and "no data" in message


def test_broken_install_without_builtins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry_module, "builtin_dir", lambda kind: None)
    assert "reinstall edgeopt" in _error([])


def test_wheel_layout_is_found_under_prefix_share(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from edgeopt import resources

    (tmp_path / "share" / "edgeopt" / "targets").mkdir(parents=True)
    monkeypatch.setattr(resources, "REPO_ROOT", tmp_path / "not-a-checkout")
    monkeypatch.setattr(resources.sys, "prefix", str(tmp_path))
    assert resources.builtin_dir("targets") == tmp_path / "share" / "edgeopt" / "targets"
    assert resources.builtin_dir("recipes") is None
