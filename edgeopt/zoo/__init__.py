"""Small reference models edgeopt builds itself (random weights, real architectures): the demo's model,
the tests' fixtures and the benchmarks' workloads. Nothing is downloaded."""

from .registry import ZooModel, build, names

__all__ = ["ZooModel", "build", "names"]
