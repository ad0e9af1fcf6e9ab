"""The format plug-in: ``onnxc`` (ONNX bytes in an ``.onnxc`` file) loaded by onnxruntime, with its converter
pass ``to_onnxc``."""

from __future__ import annotations

from pathlib import Path

from .distribution import distribution

FORMAT_HOST = '''
    """The onnxc format: ONNX bytes in an .onnxc file, loaded by the built-in onnxruntime."""
    from edgeopt.errors import ModelLoadError
    from edgeopt.registry import FormatDescriptor


    class OnnxcFormat(FormatDescriptor):
        def marker(self, head):
            return None  # no marker of its own: found by suffix only

        def check_file(self, path, head):
            if head[:1] != b"\\x08":  # an ONNX ModelProto starts with field 1 (ir_version), tag 0x08
                raise ModelLoadError(f"{path} is not ONNX bytes: write it with the to_onnxc pass")


    ONNXC = OnnxcFormat(
        name="onnxc", summary="ONNX bytes in an .onnxc file (test plug-in)", suffixes=(".onnxc",),
        converter="to_onnxc", validated_by=("onnxruntime",), loaded_by=("onnxruntime",),
    )
'''

FORMAT_PASS = '''
    """The to_onnxc converter: copies the ONNX model into an .onnxc file."""
    import shutil

    from edgeopt.names import ModelFormat
    from edgeopt.passes.base import PassConfig, PassOutput
    from edgeopt.passes.convert_base import ConvertPass


    class ToOnnxcConfig(PassConfig):
        pass


    class ToOnnxcPass(ConvertPass):
        name = "to_onnxc"
        summary = "ONNX -> .onnxc (test plug-in)"
        config_class = ToOnnxcConfig
        output_format = ModelFormat("onnxc")
        suffix = ".onnxc"

        def run(self, source, ctx):
            out = ctx.output_path.with_suffix(".onnxc")
            shutil.copyfile(source.path, out)
            return PassOutput(path=out, precision=source.precision, format=self.output_format)
'''


def format_plugin(root: Path) -> Path:
    """Write the format plug-in (``onnxc`` and its converter ``to_onnxc``) under ``root``."""
    return distribution(root, "edgeopt_testplug_fmt", """
        [edgeopt.formats]
        onnxc = edgeopt_testplug_fmt.host:ONNXC

        [edgeopt.passes]
        to_onnxc = edgeopt_testplug_fmt.convert:ToOnnxcPass
    """, {"host.py": FORMAT_HOST, "convert.py": FORMAT_PASS})
