"""The common ending of the PyTorch passes that return a PyTorch artifact (``prune_structured``, ``distill``)."""

from __future__ import annotations

from typing import Any

from ..errors import first_line
from .base import Artifact, ArtifactFormat, PassContext, PassError, PassOutput


def save_pytorch_output(
    module: Any, reference: Any, source: Artifact, ctx: PassContext, *, dynamic_batch: bool, what: str,
    report: dict[str, Any], warnings: list[str],
) -> PassOutput:
    """Report the warnings, save ``module`` as an ExportedProgram at ``ctx.output_path`` and describe it.

    Args:
        module: the model to save.
        reference: the loaded input model whose example inputs trace ``module``.
        source: the pass's input artifact (its precision carries over).
        ctx: the pass context.
        dynamic_batch: export with a dynamic batch axis when the model allows it.
        what: the model, named in the error ("the distilled student").
        report: the pass report; gains ``dynamic_batch``.
        warnings: the pass's warnings.

    Raises:
        PassError: torch.export could not save the model.
    """
    from .torch_io import save_exported_program

    for msg in warnings:
        ctx.reporter.warn(msg)
    try:
        _, dynamic = save_exported_program(module, reference, ctx.output_path, dynamic_batch=dynamic_batch)
    except Exception as exc:
        raise PassError(
            f"{what} could not be saved with torch.export ({first_line(exc)}); make it torch.export-able"
        ) from exc
    report["dynamic_batch"] = dynamic
    return PassOutput(path=ctx.output_path, precision=source.precision, format=ArtifactFormat.PYTORCH,
                      report=report, warnings=warnings)
