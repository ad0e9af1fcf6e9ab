"""A kind's qualify spec block is derived from its workload settings model (issue 30: the LLM workload was declared
three times): each field with a registry Flag is a spec key with the field's checks, the keys qualify declares
itself stay as they are, and the generative kind's ``llm:`` block carries every flagged field of its model."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Annotated

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from edgeopt.bench.llm.workload import LlmWorkload
from edgeopt.qualify import QualifySpecError, load_spec
from edgeopt.qualify.gate_spec import StrictModel
from edgeopt.qualify.llm_engine import workload
from edgeopt.qualify.spec import LlmSpec
from edgeopt.qualify.workload_spec import flagged, workload_block, workload_values
from edgeopt.registry import Flag


class ToyWorkload(BaseModel):
    """A plug-in kind's workload model: two flagged fields, one shared setting."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    frames: Annotated[tuple[int, ...], Flag("--frames", "Toy: frames per chunk.", min=2)] = Field(
        default=(4,), min_length=1, description="Frames per chunk.")
    chunks: Annotated[int, Flag("--chunks", "Toy: chunks.")] = Field(default=3, ge=1, description="Chunks.")
    stateful: Annotated[bool, Flag("--stateful/--no-stateful", "Toy: keep state.")] = Field(
        default=True, description="Keep the state across chunks.")
    threads: tuple[int, ...] = Field(default=(0,), description="Shared: bench's --threads.")


class ToyOwn(StrictModel):
    """Keys qualify declares itself."""

    label: str | None = None


def test_a_flagged_field_is_a_spec_key_with_its_checks_and_its_default() -> None:
    block = workload_block(ToyWorkload, ToyOwn, name="ToySpec", chosen={"chunks": "default: qualify's"})
    assert list(block.model_fields) == ["label", "frames", "chunks", "stateful"]  # threads has no Flag: no key
    spec = block.model_validate({"frames": [2, 8], "stateful": False, "label": "x"})
    assert workload_values(spec, ToyWorkload) == {"frames": [2, 8], "stateful": False}  # chunks: qualify's choice
    assert ToyWorkload.model_validate(workload_values(spec, ToyWorkload)).frames == (2, 8)
    assert block().model_dump() == {"label": None, "frames": [4], "chunks": None, "stateful": True}
    for bad, words in (({"frames": [1]}, "values must be >= 2 (got [1])"),
                       ({"frames": []}, "at least 1 item"),
                       ({"chunks": 0}, "greater than or equal to 1"),
                       ({"threads": [2]}, "Extra inputs are not permitted")):
        with pytest.raises(ValidationError) as err:
            block.model_validate(bad)
        assert words in str(err.value), (bad, str(err.value))
    with pytest.raises(ValueError, match="nope is not a flagged field of ToyWorkload"):
        workload_block(ToyWorkload, ToyOwn, name="Bad", chosen={"nope": "x"})


def test_the_llm_block_has_every_flagged_field_of_the_generative_workload() -> None:
    keys = set(LlmSpec.model_fields)
    assert set(flagged(LlmWorkload)) <= keys  # prompt_tokens ... kv_probe: the model bench's flags come from
    assert {"runtime", "batch", "threads", "eval"} <= keys  # qualify's own keys stay


def _load(tmp_path: Path, text: str):
    path = tmp_path / "spec.yaml"
    path.write_text(textwrap.dedent(text))
    return load_spec(path)


def test_a_workload_field_without_a_spec_key_of_its_own_reaches_the_llm_bench(tmp_path: Path) -> None:
    """``kv_probe`` (bench's --kv-probe/--no-kv-probe) was never declared in the qualify spec: it is a key now,
    because the block is derived from the workload model, and it reaches the workload qualify measures."""
    loaded = _load(tmp_path, "name: d\nmodel: {zoo: tiny-llama}\nllm: {kv_probe: false, prompt_tokens: [8]}\n"
                             "gates: {tpot_ms: {max_ms: 5}}\n")
    w = workload(loaded.spec)
    assert w.kv_probe is False and w.prompt_tokens == (8,) and w.repetitions == 10


def test_a_bound_of_the_workload_model_is_a_spec_error_at_its_line(tmp_path: Path) -> None:
    """--context-depth's min (0) holds in the spec too (it was unchecked there: one declaration now)."""
    with pytest.raises(QualifySpecError) as err:
        _load(tmp_path, "name: d\nmodel: {zoo: tiny-llama}\nllm:\n  context_depth: [-1]\n")
    message = str(err.value)
    assert "spec.yaml:4: llm.context_depth" in message and "values must be >= 0 (got [-1])" in message, message
