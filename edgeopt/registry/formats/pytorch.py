"""PyTorch: an optimize input (``.pt2``, TorchScript, or a ``package.module:factory`` spec) no runtime loads."""

from __future__ import annotations

from ..format_spec import FormatDescriptor

DESCRIPTOR = FormatDescriptor(
    name="pytorch",
    summary="PyTorch model: a .pt2 ExportedProgram, a TorchScript file or a 'package.module:factory' spec",
    deployable=False,
)
