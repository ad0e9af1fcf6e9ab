"""A kind's own flags come from its settings models (issue 30, items 1 and 4): each field with a registry Flag is
a flag whose form follows from the field's type, the command receives the given values parsed, and the kind's
typed settings are built from them and the command's shared settings. The CLI has no LLM module left."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import click
import pytest
from click.testing import CliRunner
from pydantic import BaseModel, ConfigDict, Field

import edgeopt.cli
from edgeopt.bench.llm.workload import LlmWorkload
from edgeopt.cli.kind_flags import flag_values, flagged_fields, kind_flag_options, kind_settings
from edgeopt.errors import InputError
from edgeopt.registry import GENERATIVE, TENSOR, Flag, KindDescriptor, MetricSpec, get_kind


class ToyWorkload(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    frame_ms: Annotated[tuple[int, ...], Flag("--frame-ms", "Frame lengths [default: 20].", min=5)] = (20,)
    rounds: Annotated[int, Flag("--rounds", "Rounds per cell.")] = Field(default=3, ge=1)
    warm: Annotated[bool, Flag("--warm/--no-warm", "Warm the state first.")] = True
    voices: Annotated[list[str] | None, Flag("--voices", "Comma-separated voices.")] = None
    threads: tuple[int, ...] = (0,)  # not a flag: takes the command's shared threads
    seed: int = 0


@dataclass(frozen=True)
class ToySweep:
    data: Path
    tiers: Annotated[list[str] | None, Flag("--tiers", "Comma-separated tiers.")] = None


TOY = KindDescriptor(name="toy", summary="a toy kind with flags", agent_command="run",
                     metrics=(MetricSpec(name="rtf", unit="ratio"),), rank_metric="rtf",
                     workload=f"{__name__}:ToyWorkload", sweep_options=f"{__name__}:ToySweep")


def _command(hook: Any, kinds: list[KindDescriptor]) -> tuple[click.Command, list[dict[str, Any]]]:
    got: list[dict[str, Any]] = []

    @click.command()
    @kind_flag_options(hook, kinds)
    def cmd(kind_flags: dict[str, Any]) -> None:
        got.append(kind_flags)

    return cmd, got


def test_each_flagged_field_is_a_flag_of_its_type_and_arrives_parsed() -> None:
    cmd, got = _command("workload", [get_kind(TENSOR), TOY])
    assert [p.opts[0] for p in cmd.params] == ["--frame-ms", "--rounds", "--warm", "--voices"]
    help_text = CliRunner().invoke(cmd, ["--help"], terminal_width=200).output
    assert "--frame-ms N[,N...]" in help_text and "[default: 3; x>=1]" in help_text
    assert "[default: warm]" in help_text
    assert CliRunner().invoke(cmd, []).exit_code == 0 and got[-1] == {"--rounds": 3, "--warm/--no-warm": True}
    result = CliRunner().invoke(cmd, ["--frame-ms", "10,40", "--no-warm", "--voices", "a, b"])
    assert result.exit_code == 0, result.output
    assert got[-1] == {"--frame-ms": (10, 40), "--rounds": 3, "--warm/--no-warm": False, "--voices": ["a", "b"]}


def test_an_axis_below_its_minimum_or_given_twice_is_a_usage_error() -> None:
    cmd, _ = _command("workload", [TOY])
    low = CliRunner().invoke(cmd, ["--frame-ms", "2"])
    assert low.exit_code == 2 and "2 < 5" in low.output
    twice = CliRunner().invoke(cmd, ["--frame-ms", "10", "--frame-ms", "20"])
    assert twice.exit_code == 2 and "given 2 times" in twice.output


def test_the_typed_settings_take_the_flags_then_the_shared_settings_of_the_same_name() -> None:
    flags = {"--frame-ms": (10, 40), "--rounds": 5, "--warm/--no-warm": True, "--prompt-tokens": (9,)}
    settings = kind_settings(TOY, "workload", flags, {"threads": [2, 4], "seed": 7, "batch": [8]})
    assert settings == ToyWorkload(frame_ms=(10, 40), rounds=5, threads=(2, 4), seed=7)
    assert kind_settings(TOY, "workload", {}, {"threads": [], "seed": None}) == ToyWorkload()
    assert kind_settings(get_kind(TENSOR), "workload", flags, {}) is None  # a kind with no workload model
    with pytest.raises(InputError, match=r"^--rounds 0: Input should be greater than or equal to 1 .kind toy"):
        kind_settings(TOY, "workload", {"--rounds": 0}, {})


def test_a_dataclass_sweep_model_gives_its_flags_by_field_name() -> None:
    cmd, got = _command("sweep_options", [TOY])
    assert CliRunner().invoke(cmd, ["--tiers", "x,y"]).exit_code == 0
    assert flag_values(TOY, "sweep_options", got[-1]) == {"tiers": ["x", "y"]}
    assert [f.name for f in flagged_fields(ToySweep)] == ["tiers"]


def test_two_kinds_declaring_one_flag_differently_are_refused() -> None:
    other = TOY.model_copy(update={"name": "other", "workload": f"{__name__}:OtherWorkload"})
    with pytest.raises(ValueError, match="--rounds is declared differently"):
        kind_flag_options("workload", [TOY, other])


class OtherWorkload(BaseModel):
    rounds: Annotated[int, Flag("--rounds", "Another meaning.")] = 1


class OddWorkload(BaseModel):
    gains: Annotated[tuple[float, ...], Flag("--gains", "Not a form a flag takes.")] = (1.0,)


def test_a_field_type_no_flag_form_fits_is_refused_naming_it() -> None:
    odd = TOY.model_copy(update={"name": "odd", "workload": f"{__name__}:OddWorkload"})
    with pytest.raises(ValueError, match="--gains .field gains.: a flag's field is a tuple"):
        kind_flag_options("workload", [odd])


def test_the_llm_flags_of_bench_and_sweep_are_the_generative_kinds_models() -> None:
    llm = get_kind(GENERATIVE)
    assert [f.flag.name for f in flagged_fields(LlmWorkload)] == [
        "--prompt-tokens", "--gen-tokens", "--context-depth", "--repetitions", "--gen-warmup",
        "--kv-probe/--no-kv-probe"]
    flags = {"--prompt-tokens": (16, 32), "--gen-warmup": 0, "--kv-probe/--no-kv-probe": False}
    got = kind_settings(llm, "workload", flags, {"threads": [2], "batch": [], "seed": 3, "max_duration_s": 60.0})
    assert got == LlmWorkload(prompt_tokens=(16, 32), warmup=0, kv_probe=False, threads=(2,), seed=3,
                              max_duration_s=60.0)
    assert flag_values(llm, "sweep_options", {"--levels": ["int4"]}) == {"levels": ["int4"]}


def test_the_cli_package_has_no_module_of_one_kind() -> None:
    names = sorted(p.name for p in Path(edgeopt.cli.__file__).parent.glob("*.py"))
    assert not [n for n in names if "llm" in n or GENERATIVE in n], names
