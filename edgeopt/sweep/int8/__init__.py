"""The sweep's accuracy-aware INT8 search: when plain INT8 misses the threshold, the fastest INT8 mix that meets it.

:mod:`.search` runs it (:func:`.search.search_int8`) on the state of :mod:`.core`; :mod:`.steps` (quantizer variants,
per-node sensitivity, host-side narrowing on :mod:`.host_eval`), :mod:`.latency` and :mod:`.float_sets` (float sets
ranked by what they cost on each INT8 runtime), :mod:`.qdq_surgery` (nodes of a calibrated QDQ model put back in
float), :mod:`.sensitivity_cache`, the repairs before float (:mod:`.range_repair` and :mod:`.repair_step`:
per-tensor calibration ranges; :mod:`.nncf_repair`: NNCF's), the low-precision branch (:mod:`.precision`,
:mod:`.low_search`) and the NNCF backend (:mod:`.nncf_trials`, :mod:`.nncf_candidate`, :mod:`.ov`).
"""
