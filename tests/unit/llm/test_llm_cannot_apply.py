"""A level or recipe block that cannot make a folder that runs on a CPU is told from config.json before any export
(issue 30, the newcomer list): an int4 group size that does not divide the width, onnxruntime-genai's fp16."""

from __future__ import annotations

import pytest

from edgeopt.errors import InputError
from edgeopt.llm.optimize import applicable_blocks
from edgeopt.llm.recipe import load_llm_recipe
from edgeopt.llm.sweep_levels import all_levels

WIDE = {"hidden_size": 192, "intermediate_size": 512}


def _level(name: str, runtime: str):  # noqa: ANN202
    return next(lv for lv in all_levels() if (lv.name, lv.runtime) == (name, runtime))


def test_a_group_size_that_does_not_divide_the_width_is_named_with_both_numbers():
    g128 = _level("int4-g128", "openvino_genai")
    why = g128.exporter().cannot_apply(WIDE, g128.settings)
    assert why is not None and "128" in why and "hidden_size 192" in why and "config.json" in why
    g32 = _level("int4-g32", "openvino_genai")
    assert g32.exporter().cannot_apply(WIDE, g32.settings) is None  # 32 divides 192 and 512
    fp32 = _level("fp32", "openvino_genai")
    assert fp32.exporter().cannot_apply({"hidden_size": 7}, fp32.settings) is None  # no groups: any width


def test_onnxruntime_genai_fp16_is_refused_for_a_cpu_and_its_other_levels_are_not():
    fp16 = _level("fp16", "onnxruntime_genai")
    why = fp16.exporter().cannot_apply(WIDE, fp16.settings)
    assert why is not None and "CPU" in why and "fp32, int8 or int4" in why
    for name in ("int4-b32-rtn", "int8", "fp32"):
        level = _level(name, "onnxruntime_genai")
        assert level.exporter().cannot_apply(WIDE, level.settings) is None


def test_optimize_builds_the_blocks_that_apply_and_warns_for_the_others(tmp_path):
    blocks, warnings = applicable_blocks(load_llm_recipe("fp16")[0], WIDE)
    assert set(blocks) == {"openvino_genai"}
    assert len(warnings) == 1 and warnings[0].startswith("onnxruntime_genai block of recipe fp16 not built")
    only = tmp_path / "ort-fp16.yaml"
    only.write_text("name: ort-fp16\ndescription: fp16 for onnxruntime-genai only\n"
                    "onnxruntime_genai: {precision: fp16}\n")
    with pytest.raises(InputError, match="no block applies to this model.*CPU"):
        applicable_blocks(load_llm_recipe(only)[0], WIDE)
