"""Loading and saving PyTorch models for the PyTorch-side passes (``export``, ``prune_structured``, ``distill``).

A PyTorch model is named by one string, in one of three forms:

* a ``.pt2`` file written by ``torch.export.save`` (an ExportedProgram; it knows its input names and shapes);
* a TorchScript file written by ``torch.jit.save`` (``.pt``, ``.pth``, ``.ts``...; both are zip archives, so the
  kind is read from the archive's contents, not trusted from the suffix);
* ``package.module:factory``, an importable callable that takes no arguments and returns an ``nn.Module`` (the
  current directory is searched too, as with ``python -m``).

Only the factory form gives real ``nn.Conv2d`` / ``nn.Linear`` modules, which structured pruning and a
width-multiplied student need; the other two are graphs of functional ops (fine to export, distill from, or
fine-tune as a teacher). TorchScript and factory models take float32 inputs whose shapes come from
``input_shapes`` (``--input-shape NAME=DxDxD``), keyed by the names of ``forward``'s parameters.

Loading a factory imports and runs the user's code, and ``torch.jit.load`` / ``torch.export.load`` read pickled
data: load only models you trust, as with ``torch.load``.

This module imports torch at the top: import it only inside a pass's ``run`` (availability: :mod:`.torch_extra`).
Whether an input is a PyTorch model, and its input artifact, are decided without torch in :mod:`.torch_input`.
"""

from __future__ import annotations

import inspect
import warnings
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

import numpy as np
import onnx
import torch
from onnx import helper

from ..analysis.overrides import check_shape_names
from ..errors import ModelLoadError, ShapeError, first_line
from .torch_factory import call_factory
from .torch_input import is_factory_spec, looks_like_torch_model, missing_file_message, torch_artifact

# Example batch used when a batch axis is to stay dynamic: torch.export specializes dims of size 0 and 1.
DYNAMIC_EXAMPLE_BATCH = 2


class TorchModelKind(str, Enum):
    """How a PyTorch model was given."""

    EXPORTED_PROGRAM = "exported_program"
    TORCHSCRIPT = "torchscript"
    FACTORY = "factory"


@dataclass(frozen=True)
class TorchInput:
    """One positional input of a PyTorch model: its name, example shape (batch first) and dtype."""

    name: str
    shape: tuple[int, ...]
    dtype: torch.dtype


@dataclass
class LoadedTorchModel:
    """A loaded PyTorch model in eval mode, with what the passes need to run it.

    Attributes:
        module: the callable model (an ``nn.Module``, a ScriptModule, or the ExportedProgram's module).
        kind: how it was given.
        source: the file path or factory spec it came from.
        inputs: its positional inputs, in order.
        program: the ExportedProgram, for ``.pt2`` files (exported as is, keeping its dynamic dims).
        dynamic_batch: whether a ``.pt2`` program takes any batch size (its example batch is then 1).
    """

    module: torch.nn.Module
    kind: TorchModelKind
    source: str
    inputs: list[TorchInput]
    program: torch.export.ExportedProgram | None = None
    dynamic_batch: bool = False

    @property
    def is_eager(self) -> bool:
        """True for a factory's ``nn.Module``: the only kind with Conv/Linear modules to prune or narrow."""
        return self.kind is TorchModelKind.FACTORY

    @property
    def input_names(self) -> list[str]:
        return [i.name for i in self.inputs]

    def example_inputs(self, *, batch: int | None = None, seed: int = 0) -> tuple[torch.Tensor, ...]:
        """Random inputs of the model's shapes (``batch`` replaces the leading dim when given)."""
        gen = torch.Generator().manual_seed(seed)
        out = []
        for spec in self.inputs:
            shape = (batch, *spec.shape[1:]) if batch is not None and spec.shape else spec.shape
            if spec.dtype.is_floating_point:
                out.append(torch.randn(shape, generator=gen).to(spec.dtype))
            elif spec.dtype == torch.bool:
                out.append(torch.zeros(shape, dtype=torch.bool))
            else:
                out.append(torch.randint(0, 2, shape, generator=gen).to(spec.dtype))
        return tuple(out)


def load_torch_model(model: str | Path, input_shapes: Mapping[str, Sequence[int]] | None = None) -> LoadedTorchModel:
    """Load a ``.pt2`` ExportedProgram, a TorchScript file or a ``package.module:factory`` spec, in eval mode.

    Args:
        model: the file path or factory spec.
        input_shapes: example shapes by input name (required for TorchScript and factories; overrides a
            ``.pt2``'s own example shapes).

    Returns:
        The model with its inputs' names, shapes and dtypes.

    Raises:
        ModelLoadError: a missing or unreadable file, a bad factory spec, a factory that fails or does not return
            an ``nn.Module``.
        ShapeError: a needed input shape is missing, or a shape names an unknown input.
    """
    shapes = {k: tuple(int(d) for d in v) for k, v in (input_shapes or {}).items()}
    text = str(model)
    if is_factory_spec(text):
        module = call_factory(text)
        inputs = _shaped_inputs(text, _forward_names(module), shapes)
        return LoadedTorchModel(module, TorchModelKind.FACTORY, text, inputs)
    path = Path(text)
    if not path.is_file():
        raise ModelLoadError(missing_file_message(text))
    kind = _archive_kind(path)
    if kind is TorchModelKind.EXPORTED_PROGRAM:
        return _load_pt2(path, shapes)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # "torch.jit.load is deprecated"
            script = torch.jit.load(str(path), map_location="cpu")
    except Exception as exc:  # torch raises RuntimeError and others for bad archives
        raise ModelLoadError(
            f"{path} could not be loaded as TorchScript ({first_line(exc)}): save it with torch.jit.save, "
            "or export it with torch.export.save to a .pt2"
        ) from exc
    script.eval()
    names = [a.name for a in script.forward.schema.arguments[1:]]
    return LoadedTorchModel(script, TorchModelKind.TORCHSCRIPT, text, _shaped_inputs(text, names, shapes))


def save_exported_program(
    module: torch.nn.Module,
    loaded: LoadedTorchModel,
    path: Path,
    *,
    dynamic_batch: bool,
) -> tuple[Path, bool]:
    """Save ``module`` (taking ``loaded``'s inputs) as a ``.pt2`` ExportedProgram at ``path``.

    The batch axis is exported dynamic when asked and possible (a model that hard-codes its batch size falls back
    to static shapes). Returns the path and whether the batch axis stayed dynamic.

    Raises:
        torch export errors, for the caller to turn into a PassError with its own context.
    """
    module.eval()
    program = None
    dynamic = False
    if dynamic_batch and all(len(i.shape) > 0 for i in loaded.inputs):
        args = loaded.example_inputs(batch=DYNAMIC_EXAMPLE_BATCH)
        dims = tuple({0: torch.export.Dim.DYNAMIC} for _ in args)
        try:
            program = torch.export.export(module, args, dynamic_shapes=dims)
            dynamic = True
        except Exception:  # a batch-specialized model: keep its static shapes below
            program = None
    if program is None:
        program = torch.export.export(module, loaded.example_inputs())
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:  # a file object: torch warns about any name not ending in .pt2
        torch.export.save(program, fh)
    return path, dynamic


def signature_onnx(loaded: LoadedTorchModel, path: Path) -> Path:
    """Write an ONNX file that only declares ``loaded``'s inputs (batch axis symbolic), at ``path``.

    The calibration provider reads input names, dtypes and dims from an ONNX file; this lets it hand out samples
    for a PyTorch model without exporting it first.
    """
    values = []
    nodes = []
    outputs = []
    for spec in loaded.inputs:
        elem = helper.np_dtype_to_tensor_dtype(np.dtype(torch.empty((), dtype=spec.dtype).numpy().dtype))
        dims: list[int | str] = ["batch", *spec.shape[1:]] if spec.shape else []
        values.append(helper.make_tensor_value_info(spec.name, elem, dims))
        nodes.append(helper.make_node("Identity", [spec.name], [f"{spec.name}__out"]))
        outputs.append(helper.make_tensor_value_info(f"{spec.name}__out", elem, dims))
    graph = helper.make_graph(nodes, "signature", values, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save_model(model, str(path))
    return path


def count_params(module: torch.nn.Module) -> int:
    """Number of parameter elements (shared parameters counted once)."""
    return sum(p.numel() for p in {id(p): p for p in module.parameters()}.values())


def _forward_names(module: torch.nn.Module) -> list[str]:
    """Names of ``forward``'s required positional parameters."""
    try:  # the user's forward() names the model's inputs (reading a model, not probing an edgeopt object)
        params = inspect.Signature.from_callable(module.forward).parameters.values()
    except (TypeError, ValueError):
        return ["input"]
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [p.name for p in params if p.kind in kinds and p.default is inspect.Parameter.empty]


def _shaped_inputs(source: str, names: Sequence[str], shapes: Mapping[str, tuple[int, ...]]) -> list[TorchInput]:
    check_shape_names(f"PyTorch model '{source}'", names, shapes, key_by="a forward() parameter name")
    missing = [n for n in names if n not in shapes]
    if missing:
        example = " ".join(f"--input-shape {n}=1x3x224x224" for n in missing)
        raise ShapeError(
            f"PyTorch model '{source}' needs an example shape for input(s) {', '.join(missing)}: pass {example} "
            "(your real dims)"
        )
    return [TorchInput(n, shapes[n], torch.float32) for n in names]


def _archive_kind(path: Path) -> TorchModelKind:
    """Tell a ``.pt2`` archive from a TorchScript one by their members; anything else is an error."""
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.namelist()
    except (zipfile.BadZipFile, OSError) as exc:
        raise ModelLoadError(
            f"{path} is not a PyTorch archive ({first_line(exc)}): give a .pt2 from torch.export.save, a "
            "TorchScript file from torch.jit.save, or 'package.module:factory'; a state_dict checkpoint needs "
            "a factory that builds the model and loads it"
        ) from exc
    if any(m.endswith("/archive_format") or m.endswith("models/model.json") for m in members):
        return TorchModelKind.EXPORTED_PROGRAM
    if any("/code/" in m for m in members) or any(m.endswith("constants.pkl") for m in members):
        return TorchModelKind.TORCHSCRIPT
    raise ModelLoadError(
        f"{path} is a zip archive but neither a .pt2 ExportedProgram nor TorchScript (likely a torch.save "
        "checkpoint): give 'package.module:factory' that builds the model and loads it"
    )


def _load_pt2(path: Path, shapes: Mapping[str, tuple[int, ...]]) -> LoadedTorchModel:
    try:
        with open(path, "rb") as fh:  # a file object, so a pipeline artifact's other suffix is fine
            program = torch.export.load(fh)
    except Exception as exc:
        raise ModelLoadError(
            f"{path} could not be loaded as a .pt2 ExportedProgram ({first_line(exc)}): re-save it with "
            f"torch.export.save under torch {torch.__version__}"
        ) from exc
    names = list(program.graph_signature.user_inputs)
    check_shape_names(str(path), names, shapes)
    placeholders = {n.name: n for n in program.graph.nodes if n.op == "placeholder"}
    module = program.module()
    inputs = []
    for name in names:
        val = placeholders[name].meta.get("val") if name in placeholders else None
        if not isinstance(val, torch.Tensor):
            raise ModelLoadError(f"{path}: input '{name}' is not a tensor; only tensor inputs are supported")
        if name in shapes:
            shape = shapes[name]
            if len(shape) != val.dim():
                raise ShapeError(
                    f"{path}: --input-shape {name} has {len(shape)} dims but the program's input has {val.dim()}"
                )
        else:
            # A symbolic batch dim becomes 1; other symbolic dims take the example value torch kept.
            shape = tuple(
                d if isinstance(d, int) else (1 if i == 0 else _hint(d)) for i, d in enumerate(val.shape)
            )
        inputs.append(TorchInput(name, shape, val.dtype))
    dynamic = bool(inputs) and all(
        val.dim() > 0 and not isinstance(val.shape[0], int)
        for val in (placeholders[n].meta["val"] for n in names)
    )
    return LoadedTorchModel(module, TorchModelKind.EXPORTED_PROGRAM, str(path), inputs, program, dynamic)


def _hint(dim: object) -> int:
    """A symbolic dim's example value (1 when torch keeps none)."""
    node = getattr(dim, "node", None)
    hint = getattr(node, "hint", None)
    return int(hint) if isinstance(hint, int) and hint > 0 else 1


__all__ = [
    "LoadedTorchModel",
    "TorchInput",
    "TorchModelKind",
    "count_params",
    "is_factory_spec",
    "load_torch_model",
    "looks_like_torch_model",
    "save_exported_program",
    "signature_onnx",
    "torch_artifact",
]
