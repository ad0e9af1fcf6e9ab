"""Throwaway plug-ins written to a temp directory, one module each, found through ``EDGEOPT_PLUGIN_PATH`` exactly
as installed distributions are found (a ``*.dist-info`` with ``entry_points.txt`` next to the package,
:mod:`.distribution`), for the tests that show a new runtime, format or kind needs no edit anywhere in edgeopt.

- ``runtime_plugin``: runtimes ``ortplug`` (ONNX Runtime under another name) and ``ghostrt`` (its library is
  never installed), host descriptors and agent classes, plus the target ``plugbox`` (this machine, preferring
  ``ortplug``) through ``edgeopt.targets``. ``ortplug`` declares what the sweep and the CLI read from a descriptor:
  a full-precision reference option (``precision: f32``), a low-precision default (it says it runs float parts in
  ``f16`` unless told ``f32``, as OpenVINO does with BF16: the sweep's level ``f16``), the ``qdq`` INT8 backend
  (the INT8 search's latency-aware float set) and its own flag ``--ortplug-device`` (runtime option ``device``).
- ``kind_plugin``: a third model kind ``streamer`` (its own metric, the real-time factor ``rtf``; workload
  ``frame_ms``; its own ``edgeopt compare`` table) with its format ``stream`` and agent runtime ``streamrt``.
- ``format_plugin``: format ``onnxc`` (ONNX bytes in an ``.onnxc`` file, checked by its first byte) loaded by
  the built-in ``onnxruntime``, with its converter pass ``to_onnxc``.
- ``generative_plugin``: the generative runtime ``genplug`` (levels, exporter, format, agent runtime).
"""

from .format import format_plugin
from .generative import generative_plugin
from .kind import kind_plugin
from .runtime import runtime_plugin

__all__ = ["format_plugin", "generative_plugin", "kind_plugin", "runtime_plugin"]
