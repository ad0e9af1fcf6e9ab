"""Hostile YAML for the fuzz campaign: valid target / recipe / qualify spec / inventory documents, broken by
hypothesis (wrong types, unknown and misspelt keys, deleted keys, alias bombs, recursive aliases, deep nesting,
huge files, non-UTF-8 bytes, Python tags, several documents)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml
from hypothesis import strategies as st

from tests.fuzz_kit import REPO

TARGET = (REPO / "targets" / "rpi5.yaml").read_text().replace("name: rpi5", "name: fuzzed")
RECIPE = (REPO / "recipes" / "fp16.yaml").read_text()
SPEC = """\
version: 1
name: fuzzed-spec
description: a tiny model on this machine
model:
  path: model.onnx
targets:
  - target: local
measure:
  iterations: 20
  min_duration_s: 0
  warmup: 1
  seed: 0
gates:
  latency: {percentile: p50, max_ms: 10000}
  model_size: {max_mb: 10}
"""
INVENTORY = """\
devices:
  - name: dut
    host: 127.0.0.1
    port: 9
    user: nobody
    target: local
    python: /usr/bin/python3
    tags: [fuzz]
"""
BASES = {"target": TARGET, "recipe": RECIPE, "spec": SPEC, "inventory": INVENTORY}

HOSTILE_VALUES = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70), st.floats(), st.text(max_size=20), st.booleans(), st.none(),
    st.lists(st.integers(-5, 5), max_size=3), st.dictionaries(st.text(max_size=6), st.integers(), max_size=2),
    st.sampled_from(["x" * 100_000, "../../../etc/passwd", "/etc/shadow", "~root/.ssh/id_rsa", "$(touch PWNED)",
                     "a;touch PWNED", "1e400", "-0", "0x10", "NaN", "p101", "\u202e\u0000"]),
)


@dataclass
class YamlCase:
    kind: str
    data: bytes


def _paths(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*path, i))
    return out


def _parent(data: Any, path: tuple[Any, ...]) -> Any:
    for key in path[:-1]:
        data = data[key]
    return data


@st.composite
def structural(draw: st.DrawFn, base: str) -> YamlCase:
    """Parse the valid document, break one key path, dump it again."""
    data = yaml.safe_load(base)
    paths = [p for p in _paths(data) if p]
    path = draw(st.sampled_from(paths))
    parent, key = _parent(data, path), path[-1]
    how = draw(st.sampled_from(["wrong_type", "delete", "unknown_key", "typo", "wrap_list", "top_level"]))
    if how == "wrong_type":
        parent[key] = draw(HOSTILE_VALUES)
    elif how == "delete":
        del parent[key]
    elif how == "unknown_key":
        target = parent if isinstance(parent, dict) else data
        target[draw(st.text(min_size=1, max_size=12))] = draw(HOSTILE_VALUES)
    elif how == "typo" and isinstance(key, str) and len(key) > 1:
        parent[key[:-1] + draw(st.sampled_from("xs_"))] = parent.pop(key)
    elif how == "wrap_list":
        parent[key] = [parent[key]]
    elif how == "top_level":
        data = draw(st.one_of(st.lists(st.integers(), max_size=3), st.text(max_size=10), st.integers(), st.none()))
    return YamlCase(f"structure:{how}", yaml.safe_dump(data, allow_unicode=True).encode("utf-8", "surrogatepass"))


def billion_laughs(levels: int = 9) -> str:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, levels):
        refs = ", ".join([f"*a{i - 1}"] * 10)
        lines.append(f"a{i}: &a{i} [{refs}]")
    return "\n".join(lines) + "\n"


@st.composite
def textual(draw: st.DrawFn, base: str, section: str) -> YamlCase:
    """Byte- and syntax-level damage, and the classic YAML attacks, on the valid document's text."""
    raw = base.encode()
    how = draw(st.sampled_from(["truncate", "flip", "non_utf8", "bom_nul", "tabs", "python_tag", "two_documents",
                                "laughs_top", "laughs_in_key", "recursive_alias", "deep_nesting", "huge_file",
                                "huge_value", "merge_key", "duplicate_key", "empty", "binary"]))
    if how == "truncate":
        data = raw[: draw(st.integers(0, len(raw) - 1))]
    elif how == "flip":
        buf = bytearray(raw)
        for _ in range(draw(st.integers(1, 6))):
            buf[draw(st.integers(0, len(buf) - 1))] ^= 1 << draw(st.integers(0, 7))
        data = bytes(buf)
    elif how == "non_utf8":
        pos = draw(st.integers(0, len(raw)))
        data = raw[:pos] + draw(st.sampled_from([b"\xff\xfe", b"\xe9", b"\xc3\x28", b"\xed\xa0\x80"])) + raw[pos:]
    elif how == "bom_nul":
        data = draw(st.sampled_from([b"\xef\xbb\xbf", b"\xff\xfe", b"\0"])) + raw + draw(st.sampled_from([b"", b"\0"]))
    elif how == "tabs":
        data = raw.replace(b"  ", b"\t")
    elif how == "python_tag":
        data = raw + f"{section}_x: !!python/object/apply:os.system ['touch PWNED']\n".encode()
    elif how == "two_documents":
        data = raw + b"---\n" + raw
    elif how == "laughs_top":
        data = (billion_laughs(draw(st.integers(3, 12))) + f"{section}: *a2\n").encode() + raw
    elif how == "laughs_in_key":  # a real key's value replaced by the bomb
        levels = draw(st.integers(3, 12))
        lines = base.splitlines()
        tops = [i for i, line in enumerate(lines) if line[:1].isalpha()]
        at = draw(st.sampled_from(tops))
        end = next((i for i in tops if i > at), len(lines))
        key = lines[at].split(":")[0]
        kept = lines[:at] + lines[end:] + [f"{key}: *a{levels - 1}"]
        data = (billion_laughs(levels) + "\n".join(kept) + "\n").encode()
    elif how == "recursive_alias":
        data = raw + f"{section}_loop: &loop [*loop]\n".encode()
    elif how == "deep_nesting":
        n = draw(st.sampled_from([200, 2_000, 50_000]))
        data = raw + f"{section}_deep: ".encode() + b"[" * n + b"]" * n + b"\n"
    elif how == "huge_file":
        data = raw + b"# " + b"x" * (48 * 1024 * 1024) + b"\n"
    elif how == "huge_value":
        data = raw + f"{section}_big: [".encode() + b"1, " * 400_000 + b"1]\n"
    elif how == "merge_key":
        data = b"base: &b {x: 1}\n" + raw + b"<<: [*b, 3]\n"
    elif how == "duplicate_key":
        data = raw + raw.splitlines()[-1] + b"\n"
    elif how == "empty":
        data = draw(st.sampled_from([b"", b"---\n", b"~\n", b"# only a comment\n", b"[]\n", b"''\n"]))
    else:
        data = draw(st.binary(max_size=300))
    return YamlCase(f"text:{how}", data)


def hostile_yaml(section: str) -> st.SearchStrategy[YamlCase]:
    base = BASES[section]
    return st.one_of(structural(base), textual(base, section), st.just(YamlCase("valid", base.encode())))
