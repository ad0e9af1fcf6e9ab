"""The measurement flags come from MeasureSettings: defaults are the settings' defaults, a setting without a CLI
entry still becomes a flag, and the command receives the values by keyword name, parsed."""

from __future__ import annotations

from typing import Any

import click
import pytest
from click.testing import CliRunner

from edgeopt.cli.measure_options import FLAGS, measure_options
from edgeopt.settings import MEASURE_KEYWORDS, MeasureSettings


def _command(*items: Any, **changes: dict[str, Any]) -> tuple[click.Command, list[dict[str, Any]]]:
    got: list[dict[str, Any]] = []

    @click.command()
    @measure_options(*items, **changes)
    def cmd(measure: dict[str, Any]) -> None:
        got.append(measure)

    return cmd, got


def test_every_flag_is_a_setting_and_defaults_are_the_settings() -> None:
    assert set(FLAGS) <= MEASURE_KEYWORDS
    cmd, got = _command(*sorted(MEASURE_KEYWORDS - {"keep_samples", "use_target_fps"}))
    assert CliRunner().invoke(cmd, []).exit_code == 0
    settings = MeasureSettings.from_kwargs(**got[0])
    assert settings == MeasureSettings()


def test_a_setting_without_a_cli_entry_is_a_flag_from_its_field() -> None:
    cmd, got = _command("keep_samples", "iterations", iterations={"default": 7})
    keep = next(p for p in cmd.params if p.name == "keep_samples")
    assert keep.opts == ["--keep-samples"] and keep.help == MeasureSettings.model_fields["keep_samples"].description
    assert CliRunner().invoke(cmd, []).exit_code == 0 and got[-1] == {"keep_samples": False, "iterations": 7}


def test_values_arrive_parsed_by_keyword_name() -> None:
    cmd, got = _command("shapes", "runtime_options", "min_duration_s")
    result = CliRunner().invoke(cmd, ["--shape", "x=1x3", "--runtime-option", "threads=4", "--min-duration", "0.5"])
    assert result.exit_code == 0, result.output
    assert got[-1] == {"shapes": {"x": [1, 3]}, "runtime_options": {"threads": 4}, "min_duration_s": 0.5}


def test_two_applications_merge_and_unknown_names_are_refused() -> None:
    got: list[dict[str, Any]] = []

    @click.command()
    @measure_options("seed")
    @click.option("--other", default=1)
    @measure_options("warmup")
    def cmd(measure: dict[str, Any], other: int) -> None:
        got.append(measure)

    assert CliRunner().invoke(cmd, ["--seed", "3"]).exit_code == 0 and got[-1] == {"seed": 3, "warmup": 10}
    with pytest.raises(ValueError, match="not a MeasureSettings keyword"):
        measure_options("warmupp")
    with pytest.raises(ValueError, match="changes for settings not added"):
        measure_options("seed", warmup={"default": 1})
