"""The sweep's recommendation: levels ranked on interleaved rounds and the rules that decide among them.

:mod:`.recommend` measures the candidate levels round-robin and picks one (:func:`.recommend.rank`) with the decision
rules of :mod:`.decide` (bootstrap intervals, beaten, dominated) and the tie-break of :mod:`.ties`; :mod:`.negligible`
marks levels that change a negligible share of the model, :mod:`.pareto` and :mod:`.frontier` give the Pareto
frontier and why a recommendation is off it.
"""
