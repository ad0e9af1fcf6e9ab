"""The runtime plug-in: ``ortplug`` (ONNX Runtime under another name), ``ghostrt`` (never installed) and the
target ``plugbox`` (package docstring: what each declares)."""

from __future__ import annotations

from pathlib import Path

from .distribution import distribution

RUNTIME_HOST = '''
    """Host descriptors of the throwaway runtimes, and the target directory."""
    from pathlib import Path

    from edgeopt.registry import RuntimeDescriptor
    from edgeopt.registry.runtime_sweep import CliFlag, Int8Backend, LowPrecisionDefault
    from edgeopt.registry.runtimes.onnxruntime import OnnxRuntimeDescriptor

    ORTPLUG = OnnxRuntimeDescriptor(
        name="ortplug", display_name="ORT plug-in", delivers=None,
        module_sets=(("onnxruntime",),), install="pip install edgeopt-ortplug",
        validation_modules=("onnxruntime",),
        reference_options={"precision": "f32"},
        low_precision_default=LowPrecisionDefault(level="f16", option="precision", reports="f16"),
        int8_backends=(Int8Backend.QDQ,),
        cli_flags=(CliFlag(flag="--ortplug-device", option="device", metavar="DEVICE", help="ortplug device: CPU"),),
    )
    GHOSTRT = RuntimeDescriptor(
        name="ghostrt", display_name="Ghost", module_sets=(("ghost_runtime_lib",),),
        install="pip install ghost-runtime-lib (the test plug-in's library)",
    )


    def targets_dir():
        return Path(__file__).parent / "targets"
'''

RUNTIME_AGENT = '''
    """Agent side of the throwaway runtimes (imports edgeopt_agent only, never edgeopt)."""
    from edgeopt_agent.runtimes.base import Runtime, RuntimeMissing
    from edgeopt_agent.runtimes.onnxruntime_rt import OnnxRuntime
    from edgeopt_agent.runtimes.options import Option


    class OrtPlugRuntime(OnnxRuntime):
        """ONNX Runtime with two options of its own: ``device`` (CPU only) and ``precision`` (f32; not given, it
        reports running float parts in f16, a pretend low-precision default: the outputs stay FP32's)."""

        name = "ortplug"
        formats = ("onnx",)
        own = {}
        option_schema = OnnxRuntime.option_schema + (
            Option("device", "str", "ortplug device (CPU only)", default="CPU"),
            Option("precision", "str", "float precision (f32 only; not given: f16)"),
        )

        def _split(self, options):
            self.own = dict((k, options[k]) for k in ("device", "precision") if k in options)
            if self.own.get("device", "CPU") != "CPU" or self.own.get("precision", "f32") != "f32":
                raise ValueError("ortplug: device CPU and precision f32 only (got %r)" % self.own)
            return dict((k, v) for k, v in options.items() if k not in self.own)

        def load(self, model_path, options, threads):
            super().load(model_path, self._split(options), threads)

        def profile(self, model_path, options, threads):
            return super().profile(model_path, self._split(options), threads)

        def details(self):
            out = super().details()
            out.update(device=self.own.get("device", "CPU"), inference_precision=self.own.get("precision", "f16"))
            return out


    class GhostRuntime(Runtime):
        name = "ghostrt"
        formats = ("onnx",)
        packages = (("ghost_runtime_lib", ("ghost-runtime-lib",)),)

        def __init__(self):
            raise RuntimeMissing("ghost_runtime_lib is not installed: pip install ghost-runtime-lib")
'''

PLUGBOX = '''
    name: plugbox
    description: "this machine, preferring the ortplug plug-in runtime"
    arch: x86_64
    accelerator: cpu
    accelerator_kind: cpu
    runtimes: [ortplug, ghostrt, onnxruntime]
    precisions: [fp32, fp16, int8]
    detect: true
'''


def runtime_plugin(root: Path) -> Path:
    """Write the runtime plug-in (``ortplug``, ``ghostrt``, target ``plugbox``) under ``root``."""
    return distribution(root, "edgeopt_testplug_rt", """
        [edgeopt.runtimes]
        ortplug = edgeopt_testplug_rt.host:ORTPLUG
        ghostrt = edgeopt_testplug_rt.host:GHOSTRT

        [edgeopt.targets]
        testplug = edgeopt_testplug_rt.host:targets_dir

        [edgeopt_agent.runtimes]
        ortplug = edgeopt_testplug_rt.agent:OrtPlugRuntime
        ghostrt = edgeopt_testplug_rt.agent:GhostRuntime
    """, {"host.py": RUNTIME_HOST, "agent.py": RUNTIME_AGENT, "targets/plugbox.yaml": PLUGBOX})
