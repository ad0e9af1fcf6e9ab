"""The pass registry: lazy paths, duplicate names, did-you-mean, placeholders for the PyTorch passes."""

from __future__ import annotations

import sys

import pytest

from edgeopt.passes.base import PassUnavailableError
from edgeopt.passes.registry import BUILTIN_PASSES, PassRegistry, PassRegistryError, load_pass_registry


def test_builtins_load_lazily_and_resolve() -> None:
    registry = load_pass_registry()
    assert set(BUILTIN_PASSES) <= set(registry.names())
    for name in ("cleanup", "fp16", "quantize_int8", "quantize_int8_dynamic", "quantize_int4", "prune_magnitude"):
        assert registry.get(name).name == name


def test_registry_does_not_import_passes_until_used() -> None:
    sys.modules.pop("edgeopt.passes.prune_magnitude", None)
    registry = PassRegistry()
    assert "edgeopt.passes.prune_magnitude" not in sys.modules
    registry.get("prune_magnitude")
    assert "edgeopt.passes.prune_magnitude" in sys.modules


def test_unknown_name_suggests_the_closest() -> None:
    with pytest.raises(PassRegistryError, match=r"unknown pass 'quantise_int8' \(did you mean 'quantize_int8'\?\)"):
        PassRegistry().get("quantise_int8")


def test_duplicate_name_is_an_error() -> None:
    registry = PassRegistry()
    with pytest.raises(PassRegistryError, match="registered twice"):
        registry.register("cleanup", "thirdparty.passes:Cleanup", origin="entry point")


def test_bad_path_is_a_clear_error() -> None:
    registry = PassRegistry({"broken": "edgeopt.passes.no_such_module:Thing", "notapass": "edgeopt.errors:InputError"})
    with pytest.raises(PassRegistryError, match="could not be loaded"):
        registry.get("broken")
    with pytest.raises(PassRegistryError, match="not a subclass"):
        registry.get("notapass")


@pytest.mark.parametrize("name", ["export", "prune_structured", "distill"])
def test_torch_passes_are_registered_and_say_why_they_cannot_run(name: str) -> None:
    registry = PassRegistry()
    cls = registry.get_class(name)
    assert cls.name == name
    reason = cls.availability()
    if reason is None:  # the real implementation is installed and its extra is present
        assert registry.get(name) is cls
        return
    assert name in reason and ("pip install 'edgeopt[torch]'" in reason or "not available yet" in reason)
    with pytest.raises(PassUnavailableError, match=f"pass '{name}'"):
        registry.get(name)
