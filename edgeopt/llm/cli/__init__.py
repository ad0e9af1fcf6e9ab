"""The generative kind's command entries (``KindDescriptor.bench_cli``, ``sweep_cli``, ``optimize_cli``): what
``edgeopt bench``, ``sweep`` and ``optimize`` run for a decoder LLM folder, and how its results read in a terminal.
The commands themselves (edgeopt/cli/) know no kind: they parse their flags (an LLM's own, such as
``--prompt-tokens``, derived from its settings models, edgeopt/cli/kind_flags.py) and call these."""
