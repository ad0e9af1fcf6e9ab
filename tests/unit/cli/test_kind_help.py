"""The kind-specific sentences of the commands' help come from each kind's descriptor (``cli_help``), composed in
registry order (issue 30 item 6: no module of edgeopt/cli/ names a kind): a plug-in kind's fragment appears beside
the built-ins', and the built-ins' compose to the help texts the commands had."""

from __future__ import annotations

import click
from click.testing import CliRunner

from edgeopt.cli.kind_help import command_help, fragments, option_help
from edgeopt.registry import builtin_kind
from edgeopt.registry.kind_spec import KindDescriptor, KindHelp, MetricSpec

TOY = KindDescriptor(name="toy", summary="a toy kind", agent_command="run",
                     metrics=(MetricSpec(name="rtf", unit="ratio"),), rank_metric="rtf",
                     cli_help=KindHelp(bench="MODEL may be a toy stream: its rtf per cell.",
                                       sweep_eval="for a toy stream a .wav folder"))
BUILTINS = [builtin_kind("tensor"), builtin_kind("generative")]


def test_each_kind_adds_its_fragment_in_registry_order() -> None:
    kinds = [*BUILTINS, TOY]
    assert option_help(".npz or an image folder", "sweep_eval", kinds) == (
        ".npz or an image folder; for an LLM folder a held-out .txt file; for a toy stream a .wav folder.")
    assert option_help("Calibration data (default: --eval)", "sweep_calib", [TOY]) == (
        "Calibration data (default: --eval).")  # a kind without a fragment adds nothing
    assert fragments("optimize", [TOY]) == []
    text = command_help("Benchmark MODEL.", "bench", "Exit 0 pass.", kinds=kinds)
    assert text.split("\n\n") == ["Benchmark MODEL.", BUILTINS[1].cli_help.bench, TOY.cli_help.bench, "Exit 0 pass."]


def test_a_composed_help_renders_as_the_docstring_it_replaces() -> None:
    """click rewraps a paragraph either way: a help composed from fragments prints as the docstring did."""
    def documented() -> None:
        """Benchmark MODEL on a target, or on many devices at once with --devices
        (docs/fleet.md).

        MODEL may be a toy stream: its rtf
        per cell.

        Exit 0 pass.
        """

    doc = click.command("a")(documented)
    composed = click.command("a", help=command_help(
        "Benchmark MODEL on a target, or on many devices at once with --devices (docs/fleet.md).", "bench",
        "Exit 0 pass.", kinds=[TOY]))(lambda: None)
    for width in (40, 200):
        assert (CliRunner().invoke(composed, ["--help"], terminal_width=width).output
                == CliRunner().invoke(doc, ["--help"], terminal_width=width).output)
