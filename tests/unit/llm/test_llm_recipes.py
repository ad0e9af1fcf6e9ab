"""LLM recipes (recipes/llm/): every shipped one loads, the builder options they become, and clear refusals."""

from __future__ import annotations

import pytest

from edgeopt.llm.recipe import OrtGenaiSettings, llm_recipe_names, load_llm_recipe
from edgeopt.recipes import RecipeError, builtin_names


def test_shipped_llm_recipes_load_and_stay_out_of_the_onnx_recipe_list():
    names = llm_recipe_names()
    assert {"int4", "int8", "fp16", "fp32", "q4_k_m", "q8_0", "gguf-f32"} <= set(names)
    for name in names:
        recipe, path = load_llm_recipe(name)
        assert recipe.name == name == path.stem
        assert recipe.blocks and set(recipe.blocks) <= {"onnxruntime_genai", "openvino_genai", "llama_cpp"}
    assert "int4-k-quant" not in builtin_names() and "int4-awq" not in builtin_names()


def test_data_aware_settings_are_int4_only():
    ov = load_llm_recipe("int4-awq")[0].block("openvino_genai")
    assert ov is not None and ov.data_aware and ov.awq and ov.scale_estimation
    from edgeopt.llm.recipe import OvGenaiSettings

    with pytest.raises(ValueError, match="apply to int4 weights, not int8_sym"):
        OvGenaiSettings(weights="int8_sym", awq=True)


def test_int4_settings_become_the_builders_extra_options():
    settings = load_llm_recipe("int4-k-quant")[0].block("onnxruntime_genai")
    assert settings.builder_options() == {"block_size": "32", "is_symmetric": "true", "accuracy_level": "4",
                                          "algo_config": "k_quant", "matmul_mixed_precision": "last_matmul:int8"}
    assert OrtGenaiSettings(precision="fp32").builder_options() == {}


def test_unknown_names_and_bad_values_are_one_line(tmp_path):
    with pytest.raises(RecipeError, match="unknown LLM recipe 'int5' \\(did you mean"):
        load_llm_recipe("int5")
    bad = tmp_path / "r.yaml"
    bad.write_text("name: r\ndescription: bad block\nonnxruntime_genai: {precision: int4, block_size: 48}\n")
    with pytest.raises(RecipeError, match=r"onnxruntime_genai.block_size"):
        load_llm_recipe(bad)
    bad.write_text("name: r\ndescription: bad group\nopenvino_genai: {weights: int4_sym, group_size: 48}\n")
    with pytest.raises(RecipeError, match=r"group_size 48 must be -1 or a power of two"):
        load_llm_recipe(bad)
    bad.write_text("name: r\ndescription: nothing\n")
    with pytest.raises(RecipeError, match=r"needs an onnxruntime_genai or openvino_genai or llama_cpp block"):
        load_llm_recipe(bad)
    bad.write_text("name: r\ndescription: k-quant on fp32\nonnxruntime_genai: {precision: fp32, algo: k_quant}\n")
    with pytest.raises(RecipeError, match="apply to int4/int8"):
        load_llm_recipe(bad)
    bad.write_text("name: r\ndescription: a typo\nopenvino_gena: {weights: int4_sym}\n")
    with pytest.raises(RecipeError, match=r"openvino_gena: unknown key.*onnxruntime_genai, openvino_genai"):
        load_llm_recipe(bad)
