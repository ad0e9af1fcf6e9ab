"""The kind-specific sentences of the commands' help come from each kind's descriptor (``cli_help``), composed in
registry order (issue 30 item 6: no module of edgeopt/cli/ names a kind): a plug-in kind's fragment appears beside
the built-ins', and the built-ins' compose to the help texts the commands had."""

from __future__ import annotations

import click
from click.testing import CliRunner

from edgeopt.cli.kind_help import command_help, fragments, option_help, sentence_help
from edgeopt.registry import builtin_kind
from edgeopt.registry.kind_spec import KindDescriptor, KindHelp, MetricSpec

TOY = KindDescriptor(name="toy", summary="a toy kind", agent_command="run",
                     metrics=(MetricSpec(name="rtf", unit="ratio"),), rank_metric="rtf",
                     cli_help=KindHelp(bench="MODEL may be a toy stream: its rtf per cell.",
                                       sweep_eval="for a toy stream a .wav folder",
                                       compare="Two toy runs are compared per frame duration on rtf."))
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


def test_a_kinds_sentence_joins_the_commands_paragraph() -> None:
    assert sentence_help("Is B slower?", "compare", [BUILTINS[0], TOY]) == (
        "Is B slower? Two toy runs are compared per frame duration on rtf.")
    assert sentence_help("Is B slower?", "compare", [BUILTINS[0]]) == "Is B slower?"


# `edgeopt compare --help` as it was when the command's docstring named LLM runs (before the sentence moved to the
# generative kind's cli_help.compare), at 80 and 200 columns (the group caps its text at 110).
COMPARE_HELP = {
    80: """Usage: edgeopt compare [OPTIONS] RUN_A RUN_B

  Is RUN_B slower than RUN_A beyond noise? Exit 1 when it is a regression. Two
  LLM bench runs are compared per workload cell on TTFT, TPOT and decode
  tokens/s (docs/llm-bench.md).

Options:
  --tolerance FLOAT RANGE  Median slowdown (percent) tolerated before a
                           significant change is a regression.  [default: 5.0;
                           x>=0]
  --alpha FLOAT RANGE      Significance level of the Mann-Whitney U test.
                           [default: 0.05; 0<x<1]
  --history-db FILE        Results history file [default: $EDGEOPT_HISTORY_DB
                           or $XDG_DATA_HOME/edgeopt/history.sqlite3].
  --json                   Print only JSON on stdout.
  -h, --help               Show this message and exit.
""",
    200: """Usage: edgeopt compare [OPTIONS] RUN_A RUN_B

  Is RUN_B slower than RUN_A beyond noise? Exit 1 when it is a regression. Two LLM bench runs are compared
  per workload cell on TTFT, TPOT and decode tokens/s (docs/llm-bench.md).

Options:
  --tolerance FLOAT RANGE  Median slowdown (percent) tolerated before a significant change is a regression.
                           [default: 5.0; x>=0]
  --alpha FLOAT RANGE      Significance level of the Mann-Whitney U test.  [default: 0.05; 0<x<1]
  --history-db FILE        Results history file [default: $EDGEOPT_HISTORY_DB or
                           $XDG_DATA_HOME/edgeopt/history.sqlite3].
  --json                   Print only JSON on stdout.
  -h, --help               Show this message and exit.
""",
}


def test_the_compare_help_composed_from_the_kinds_reads_as_its_docstring_did(monkeypatch, capsys) -> None:
    from edgeopt.cli.main import main

    for width, want in COMPARE_HELP.items():
        monkeypatch.setenv("COLUMNS", str(width))
        assert main(["compare", "--help"]) == 0
        assert capsys.readouterr().out == want, width
