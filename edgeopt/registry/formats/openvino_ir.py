"""OpenVINO IR: ``model.xml`` (the graph) with ``model.bin`` (the weights) next to it."""

from __future__ import annotations

from pathlib import Path

from ...errors import ModelLoadError
from ..format_spec import FormatDescriptor


class OpenVinoIrFormat(FormatDescriptor):
    """An IR ``.xml`` (recognised by its ``<net>`` element) that needs its ``.bin``."""

    def marker(self, head: bytes) -> bool | None:
        return b"<net" in head

    def check_file(self, path: Path, head: bytes) -> None:
        if not self.marker(head):
            raise ModelLoadError(f"{path} is not an OpenVINO IR .xml (no <net> element): pass the .xml that "
                                 "openvino.save_model wrote")
        if not path.with_suffix(".bin").is_file():
            raise ModelLoadError(f"OpenVINO IR {path} has no weights file {path.with_suffix('.bin').name} next to "
                                 "it: keep the .xml and .bin together")

    def companions(self, path: Path) -> list[Path]:
        weights = path.with_suffix(".bin")
        return [weights] if weights.is_file() else []


DESCRIPTOR = OpenVinoIrFormat(
    name="openvino_ir",
    summary="OpenVINO IR (.xml graph + .bin weights)",
    suffixes=(".xml",),
    converter="to_openvino",
    validated_by=("openvino",),
)
