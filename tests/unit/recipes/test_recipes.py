"""Recipes: built-ins load, user recipes are paths, and every mistake names the file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgeopt.passes.registry import PassRegistry
from edgeopt.recipes import RecipeError, builtin_names, load_recipe, load_recipe_file, resolve_recipe_path

SHIPPED = ["distill-half", "fp16", "int4", "int8", "int8-dynamic", "int8-nncf", "prune30-int8", "prune50"]


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "mine.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_issue_recipes_ship() -> None:
    assert set(SHIPPED) <= set(builtin_names())


@pytest.mark.parametrize("name", [n for n in SHIPPED if n != "distill-half"])
def test_onnx_recipes_load_with_their_passes(name: str) -> None:
    loaded = load_recipe(name)
    assert loaded.recipe.name == name
    assert [p.name for p in loaded.passes] == [s.pass_name for s in loaded.recipe.passes]
    assert loaded.passes[0].name == "cleanup"


def test_distill_half_loads_or_says_why_not() -> None:
    registry = PassRegistry()
    if registry.get_class("distill").availability() is None:
        assert load_recipe("distill-half").passes[0].name == "distill"
        return
    with pytest.raises(RecipeError, match=r"distill-half\.yaml:\d+: pass 'distill'"):
        load_recipe("distill-half")


def test_unknown_pass_names_file_line_and_suggestion(tmp_path: Path) -> None:
    path = _write(tmp_path, "name: mine\ndescription: a test recipe\npasses:\n  - pass: cleanup\n"
                            "  - pass: quantize_int9\n")
    with pytest.raises(RecipeError, match=r"mine\.yaml:5: unknown pass 'quantize_int9' \(did you mean 'quantize_int8'"):
        load_recipe(path)


def test_unknown_option_names_file_line_and_known_options(tmp_path: Path) -> None:
    path = _write(tmp_path, "name: mine\ndescription: a test recipe\npasses:\n  - pass: quantize_int8\n"
                            "    config:\n      per_channel: true\n      calibration_methd: entropy\n")
    with pytest.raises(RecipeError, match=r"mine\.yaml:7: unknown option 'calibration_methd' for pass "
                                          r"'quantize_int8' \(did you mean 'calibration_method'\?\)"):
        load_recipe(path)


def test_nested_advanced_option_and_bad_value_have_lines(tmp_path: Path) -> None:
    path = _write(tmp_path, "name: mine\ndescription: a test recipe\npasses:\n  - pass: quantize_int8\n"
                            "    config:\n      advanced:\n        percentil: 99.9\n")
    with pytest.raises(RecipeError, match=r"mine\.yaml:7: unknown option 'advanced\.percentil'.*did you mean "
                                          r"'percentile'"):
        load_recipe(path)
    path = _write(tmp_path, "name: mine\ndescription: a test recipe\npasses:\n  - pass: prune_magnitude\n"
                            "    config: {sparsity_ratio: 1.5}\n")
    with pytest.raises(RecipeError, match=r"mine\.yaml:5: invalid 'sparsity_ratio'.*1\.5"):
        load_recipe(path)


def test_top_level_mistakes(tmp_path: Path) -> None:
    with pytest.raises(RecipeError, match=r"mine\.yaml:3: unknown option 'pases'"):
        load_recipe(_write(tmp_path, "name: mine\ndescription: a test recipe\npases: []\n"))
    with pytest.raises(RecipeError, match=r"mine\.yaml:\d+: YAML syntax error"):
        load_recipe(_write(tmp_path, "name: mine\ndescription: x\npasses: [\n"))
    with pytest.raises(RecipeError, match="is missing 'passes'"):
        load_recipe(_write(tmp_path, "name: mine\ndescription: a test recipe\n"))


def test_recipe_names_and_paths_resolve(tmp_path: Path) -> None:
    assert resolve_recipe_path("int8").name == "int8.yaml"
    with pytest.raises(RecipeError, match=r"unknown recipe 'int9' \(did you mean 'int8'\?\)"):
        resolve_recipe_path("int9")
    with pytest.raises(RecipeError, match="recipe file .* not found"):
        resolve_recipe_path(tmp_path / "nope.yaml")
    path = _write(tmp_path, "name: mine\ndescription: a test recipe\npreprocessing:\n  crop_px: [32, 32]\n"
                            "passes:\n  - pass: fp16\n")
    loaded = load_recipe_file(path, PassRegistry())
    assert loaded.recipe.preprocessing is not None and loaded.recipe.preprocessing.crop_px == (32, 32)


def test_convert_section_configures_the_converters() -> None:
    loaded = load_recipe("int8-nncf")
    assert set(loaded.converters) == {"to_openvino"}
    assert loaded.converters["to_openvino"].config.int8.value == "nncf"


def test_convert_section_mistakes_name_file_and_line(tmp_path: Path) -> None:
    head = "name: mine\ndescription: a test recipe\npasses:\n  - pass: cleanup\nconvert:\n"
    with pytest.raises(RecipeError, match=r"mine\.yaml:6: 'cleanup' is not a conversion pass; use one of "
                                          r"tensorrt_prepare, to_coreml, to_openvino, to_tflite"):
        load_recipe(_write(tmp_path, head + "  cleanup:\n    min_opset: 17\n"))
    with pytest.raises(RecipeError, match=r"mine\.yaml:7: unknown option 'int9' for pass 'to_openvino'"):
        load_recipe(_write(tmp_path, head + "  to_openvino:\n    int9: nncf\n"))
