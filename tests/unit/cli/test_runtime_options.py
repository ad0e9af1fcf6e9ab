"""``--runtime-option KEY=VALUE``: values are YAML scalars, malformed pairs are usage errors."""

from __future__ import annotations

import click
import pytest

from edgeopt.cli.common import parse_runtime_options


def test_values_are_typed_scalars() -> None:
    got = parse_runtime_options(("num_streams=2", "fp16=true", "performance_hint=LATENCY", "cache_dir=/tmp/a=b",
                                 "ratio=0.5"))
    assert got == {"num_streams": 2, "fp16": True, "performance_hint": "LATENCY", "cache_dir": "/tmp/a=b",
                   "ratio": 0.5}


@pytest.mark.parametrize("bad", ["novalue", "=3", " =x"])
def test_malformed_pairs_name_the_fix(bad: str) -> None:
    with pytest.raises(click.BadParameter, match="KEY=VALUE"):
        parse_runtime_options((bad,))
