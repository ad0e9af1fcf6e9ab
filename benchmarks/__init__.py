"""Reproducible benchmarks (``make bench-<name>``, docs/benchmarks.md "How to run") and their shared helpers
(:mod:`benchmarks.common`). Run one from the repository root: ``python -m benchmarks.<name> --help``."""
