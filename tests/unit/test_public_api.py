"""The package root's API: ``edgeopt.optimize`` (and the others) stay functions after their subpackage of the same
name is imported, and each is the function its subpackage defines (docs/architecture.md, "Layout")."""

from __future__ import annotations

import importlib
import types

import pytest

import edgeopt

# API name -> (the subpackage or module imported first, the module that defines the function)
API = {
    "optimize": ("edgeopt.optimize.fidelity", "edgeopt.optimize.api"),
    "benchmark": ("edgeopt.bench.manifest", "edgeopt.bench.api"),
    "sweep": ("edgeopt.sweep.fleet", "edgeopt.sweep.api"),
    "profile": ("edgeopt.profile", "edgeopt.profile.api"),
    "qualify": ("edgeopt.qualify.engine", "edgeopt.api"),
    "inspect": ("edgeopt.analysis", "edgeopt.api"),
}


@pytest.mark.parametrize("name", sorted(API))
def test_an_api_name_is_its_function_after_its_subpackage_is_imported(name):
    subpackage, defined_in = API[name]
    importlib.import_module(subpackage)
    function = getattr(edgeopt, name)
    assert isinstance(function, types.FunctionType), f"edgeopt.{name} is {function!r}"
    assert function is getattr(importlib.import_module(defined_in), name)
    namespace: dict[str, object] = {}
    exec(f"from edgeopt import {name}", namespace)  # the import statement form resolves the same way
    assert namespace[name] is function


def test_the_root_lists_every_api_name():
    assert set(API) <= set(edgeopt.__all__) and set(API) <= set(dir(edgeopt))


def test_the_stage_packages_stay_reachable_as_modules():
    assert isinstance(edgeopt.bench, types.ModuleType) and edgeopt.bench.benchmark is edgeopt.benchmark
    assert importlib.import_module("edgeopt.optimize").optimize is edgeopt.optimize
