"""Shared fixtures: tiny models built here (nothing downloaded)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from edgeopt.config import (
    ENV_HISTORY_DB,
    ENV_INVENTORY,
    ENV_LOCK_DIR,
    ENV_PLUGIN_PATH,
    ENV_RAY_ADDRESS,
    ENV_TARGETS_DIR,
    ENV_TOOLS_DIR,
    ENV_WHEELS_DIR,
)
from edgeopt.zoo import build
from tests import xdist_groups

# The suite's own cache and tool directories (issue 30 item 7): never what the user has installed. Persistent under
# the checkout's out/ so the costly ones (the trained zoo LLM, a TFLite converter env for the slow tests) are built
# once per checkout; EDGEOPT_TEST_CACHE moves them (docs: README, Tests).
TEST_CACHE = Path(os.environ.get("EDGEOPT_TEST_CACHE") or Path(__file__).resolve().parents[1] / "out" / "test-cache")
# Variables that would point the suite at the user's own setup; the suite sets its own or none.
USER_SETUP = (ENV_TARGETS_DIR, ENV_PLUGIN_PATH, ENV_INVENTORY, ENV_RAY_ADDRESS)


def _own_caches() -> None:
    for name in USER_SETUP:
        os.environ.pop(name, None)
    os.environ[ENV_TOOLS_DIR] = str(TEST_CACHE / "tools")
    os.environ[ENV_WHEELS_DIR] = str(TEST_CACHE / "wheels")
    os.environ["EDGEOPT_ZOO_CACHE"] = str(TEST_CACHE / "zoo")
    os.environ["EDGEOPT_TEST_CACHE"] = str(TEST_CACHE)  # tests/llm_models.py's shared tiny LLM, never ~/.cache


def pytest_configure(config: pytest.Config) -> None:
    _own_caches()
    xdist_groups.name_groups_dir(config)


def pytest_unconfigure(config: pytest.Config) -> None:
    xdist_groups.remove_groups_dir(config)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    xdist_groups.write_groups(config, items)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[object]:
    """Under xdist, the few latency-comparing tests run while the other worker waits (tests/xdist_groups.py)."""
    with xdist_groups.turn(item, nextitem):
        return (yield)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``make test`` (``-n 2 --dist loadgroup``): tests sharing a fixture stay on one worker (tests/xdist_groups.py)."""
    return xdist_groups.make_scheduler(config, log)


@pytest.fixture(scope="session", autouse=True)
def _history_db_outside_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Runs recorded by any test (``edgeopt bench`` records by default) go to a temp file, never the user's home."""
    path = tmp_path_factory.mktemp("history") / "history.sqlite3"
    saved = os.environ.get(ENV_HISTORY_DB)
    os.environ[ENV_HISTORY_DB] = str(path)
    yield path
    if saved is None:
        os.environ.pop(ENV_HISTORY_DB, None)
    else:
        os.environ[ENV_HISTORY_DB] = saved


@pytest.fixture(scope="session", autouse=True)
def _local_lock_per_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Local runs take this machine's lock (edgeopt.runners.local): one per test session, so the two workers of
    ``make test`` do not queue behind each other (latency comparisons run alone anyway, tests/xdist_groups.py)."""
    path = tmp_path_factory.mktemp("locks")
    saved = os.environ.get(ENV_LOCK_DIR)
    os.environ[ENV_LOCK_DIR] = str(path)
    yield path
    if saved is None:
        os.environ.pop(ENV_LOCK_DIR, None)
    else:
        os.environ[ENV_LOCK_DIR] = saved


@pytest.fixture(scope="session")
def tiny_cnn(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The zoo's mobilenet-tiny (dynamic batch, 1x3x32x32 input, 10 classes)."""
    return build("mobilenet-tiny", tmp_path_factory.mktemp("models") / "mobilenet-tiny.onnx")


def make_matmul_model(path: Path, *, dynamic_dim: str | None = None, k: int = 64, n: int = 32) -> Path:
    """y = x @ W with x of shape [1, k] (or [1, dynamic_dim] symbolic on axis 1 when given)."""
    w = numpy_helper.from_array(np.random.default_rng(0).standard_normal((k, n)).astype(np.float32), "W")
    x_shape: list[int | str] = [1, dynamic_dim if dynamic_dim else k]
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["y"])], "mm",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, n])], [w],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return path


@pytest.fixture()
def matmul_model(tmp_path: Path) -> Path:
    return make_matmul_model(tmp_path / "mm.onnx")
