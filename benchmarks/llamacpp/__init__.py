"""The parts of ``benchmarks/llamacpp_goals.py`` (issue 33's goals): the plain llama.cpp run, the interleaved timing
rounds and their ratios, the models they time, and the sweep run twice."""
