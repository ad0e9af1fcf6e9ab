"""Core ML: an ``.mlpackage`` directory (ML program) or a legacy ``.mlmodel`` file; runs on macOS only."""

from __future__ import annotations

from pathlib import Path

from ...errors import ModelLoadError
from ..format_spec import ConversionSource, FormatDescriptor


class CoremlFormat(FormatDescriptor):
    """A package is a directory with ``Manifest.json``; every file in it belongs to the model."""

    def check_directory(self, path: Path) -> None:
        if path.suffix.lower() == ".mlpackage" and not (path.is_dir() and (path / "Manifest.json").is_file()):
            raise ModelLoadError(f"{path} is not a Core ML package (a directory with Manifest.json): "
                                 "pass the .mlpackage directory coremltools saved")


DESCRIPTOR = CoremlFormat(
    name="coreml",
    summary="Core ML model (.mlpackage directory or .mlmodel file)",
    suffixes=(".mlpackage", ".mlmodel"),
    directory=True,
    converter="to_coreml",
    conversion_source=ConversionSource.INPUT,
)
