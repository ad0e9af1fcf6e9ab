"""One-off research scripts: each answered one question in one session; kept beside the numbers docs/benchmarks.md
cites (benchmarks/results/). Run from the repository root: ``python -m benchmarks.research.<name>``."""
