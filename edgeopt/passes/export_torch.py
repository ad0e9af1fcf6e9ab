"""``export``: PyTorch -> ONNX with the dynamo exporter, then checked against torch on sample inputs.

Why dynamo: the legacy TorchScript exporter was seen to give silently wrong results on a transformer here, so
factory models and ``.pt2`` programs go through ``torch.onnx.export(..., dynamo=True)``. A TorchScript file cannot
be captured by ``torch.export``; it goes through the legacy exporter (the only one that reads ScriptModules), and
the output check below is what guards it.

After export: stale ``value_info`` is cleared (it breaks onnxruntime quantization), the file is written as one
file unless the weights approach protobuf's 2 GiB limit, and the ONNX outputs are compared with torch's on
calibration samples (or seeded random inputs): a difference beyond the tolerance fails the pass with the max error.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import onnx
from pydantic import Field

from ..enums import Precision
from ..errors import first_line
from .base import Artifact, ArtifactFormat, Pass, PassConfig, PassContext, PassError, PassOutput
from .onnx_io import SINGLE_FILE_LIMIT_BYTES, check, data_files, opset, save
from .torch_extra import torch_unavailable

if TYPE_CHECKING:
    import torch

    from .torch_io import LoadedTorchModel

# The dynamo exporter writes opset 18 natively; lower versions go through a version converter that often fails.
DEFAULT_OPSET = 18
MAX_OPSET = onnx.defs.onnx_opset_version()


class ExportAdvanced(PassConfig):
    optimize: bool = Field(
        default=True, description="Let the exporter fold constants and remove redundant nodes (onnxscript optimizer)."
    )
    legacy_for_torchscript: bool = Field(
        default=True,
        description="Export TorchScript files with the legacy exporter (dynamo cannot read them); False: refuse.",
    )
    external_data: bool = Field(
        default=False,
        description="Always write the weights to '<file>.data' next to the model. Done anyway when they reach "
        "~1.8 GB (protobuf cannot hold 2 GiB); below that the model is one file.",
    )


class ExportConfig(PassConfig):
    opset: int = Field(
        default=DEFAULT_OPSET,
        ge=7,
        le=MAX_OPSET,
        description="ONNX opset of the output. The dynamo exporter writes 18; lower ones are converted, and a "
        "failed conversion is an error.",
    )
    dynamic_batch: bool = Field(
        default=True,
        description="Make the first axis of every input a dynamic 'batch' dim (.pt2 programs keep their own dims).",
    )
    verify_samples: int = Field(
        default=4,
        ge=0,
        description="Sample inputs on which ONNX (onnxruntime) and torch outputs are compared; 0 skips the check.",
    )
    tolerance_abs: float = Field(
        default=1e-4, ge=0, description="Allowed max abs difference between ONNX and torch outputs..."
    )
    tolerance_rel: float = Field(
        default=1e-4, ge=0, description="...plus this fraction of the largest abs torch output value."
    )
    output_names: list[str] | None = Field(
        default=None, description="Names for the ONNX outputs, in order (None: the exporter's names)."
    )
    advanced: ExportAdvanced = Field(default_factory=ExportAdvanced, description="Rarely changed options.")


class ExportPass(Pass[ExportConfig]):
    name = "export"
    summary = "PyTorch -> ONNX with the dynamo exporter, outputs checked against torch with onnxruntime"
    config_class = ExportConfig
    input_formats = frozenset({ArtifactFormat.PYTORCH})
    output_format = ArtifactFormat.ONNX

    @classmethod
    def availability(cls) -> str | None:
        return torch_unavailable(cls.name)

    def run(self, source: Artifact, ctx: PassContext) -> PassOutput:
        from .torch_io import load_torch_model

        cfg = self.config
        loaded = load_torch_model(source.path, ctx.input_shapes)
        warn: list[str] = []
        external = cfg.advanced.external_data or _weight_bytes(loaded.module) >= SINGLE_FILE_LIMIT_BYTES
        started = time.perf_counter()
        model, exporter, data_file = self._export(loaded, warn, ctx.work_dir, ctx.output_path.name, external)
        export_seconds = time.perf_counter() - started
        value_info = len(model.graph.value_info)
        del model.graph.value_info[:]
        if opset(model) != cfg.opset:
            model = convert_opset(model, cfg.opset, source.path)
        if cfg.output_names:
            _rename_outputs(model, cfg.output_names, source.path)
        if data_file is not None:  # the model refers to '<output name>.data': write it and move the data beside it
            ctx.output_path.parent.mkdir(parents=True, exist_ok=True)
            onnx.save_model(model, str(ctx.output_path))
            os.replace(data_file, ctx.output_path.parent / data_file.name)
        else:
            save(model, ctx.output_path)
        check(ctx.output_path, self.name)
        report: dict[str, Any] = {
            "exporter": exporter,
            "opset": opset(model),
            "export_seconds": round(export_seconds, 3),
            "value_info_cleared": value_info,
            "inputs": {i.name: list(i.shape) for i in loaded.inputs},
            "outputs": [o.name for o in model.graph.output],
            "params": int(sum(int(np.prod(t.dims)) for t in model.graph.initializer)),
            "external_data": data_file is not None or bool(data_files(ctx.output_path)),
        }
        if cfg.verify_samples:
            started = time.perf_counter()
            feeds = self._verify_inputs(loaded, ctx)
            err = verify_onnx(ctx.output_path, loaded.module, feeds, cfg.tolerance_abs, cfg.tolerance_rel, source.path)
            report.update(
                max_abs_error=err,
                samples_checked=len(feeds),
                verify_seconds=round(time.perf_counter() - started, 3),
            )
        else:
            warn.append("export: verify_samples is 0, so the ONNX outputs were NOT compared with torch")
        report["dynamic_batch"] = _has_dynamic_batch(model)
        for msg in warn:
            ctx.reporter.warn(msg)
        return PassOutput(
            path=ctx.output_path, precision=Precision.FP32, format=ArtifactFormat.ONNX, report=report, warnings=warn
        )

    def _export(
        self, loaded: LoadedTorchModel, warn: list[str], work_dir: Path, file_name: str, external: bool
    ) -> tuple[onnx.ModelProto, str, Path | None]:
        """The exported model, the exporter used, and its external data file (in ``work_dir``) when it has one."""
        import torch

        from .torch_io import DYNAMIC_EXAMPLE_BATCH, TorchModelKind

        cfg = self.config
        names = loaded.input_names
        dynamic = cfg.dynamic_batch and all(len(i.shape) > 0 for i in loaded.inputs)
        try:
            with _quiet_exporter():
                if loaded.kind is TorchModelKind.TORCHSCRIPT:
                    if not cfg.advanced.legacy_for_torchscript:
                        raise PassError(
                            f"{loaded.source} is TorchScript, which the dynamo exporter cannot read; give a .pt2 "
                            "or a factory, or set advanced.legacy_for_torchscript: true"
                        )
                    warn.append(
                        f"{loaded.source} is TorchScript: exported with the legacy exporter (dynamo cannot read "
                        "ScriptModules); its outputs are checked against torch"
                    )
                    if external:
                        raise PassError(
                            f"{loaded.source} is TorchScript with ~2 GB of weights or external_data set, which the "
                            "legacy exporter path does not handle; give a .pt2 or a factory"
                        )
                    return self._export_legacy(loaded, dynamic, work_dir), "torchscript-legacy", None
                if loaded.program is not None:
                    target: Any = loaded.program
                    args = loaded.example_inputs()
                    dims = None
                else:
                    target = loaded.module
                    args = loaded.example_inputs(batch=DYNAMIC_EXAMPLE_BATCH if dynamic else None)
                    dims = tuple({0: torch.export.Dim.DYNAMIC} for _ in args) if dynamic else None
                program = torch.onnx.export(
                    target,
                    args,
                    input_names=names,
                    dynamo=True,
                    opset_version=max(cfg.opset, DEFAULT_OPSET),
                    dynamic_shapes=dims,
                    optimize=cfg.advanced.optimize,
                    verbose=False,
                )
        except PassError:
            raise
        except Exception as exc:  # the exporter raises many types; all mean "this model did not export"
            hint = " or set dynamic_batch: false" if dynamic else ""
            raise PassError(
                f"export of {loaded.source} failed ({type(exc).__name__}: {first_line(exc)}); make the model "
                f"torch.export-able (see the exportdb of the PyTorch docs){hint}"
            ) from exc
        if program is None:
            raise PassError(f"export of {loaded.source} returned nothing; report this with the model")
        if not external:
            return program.model_proto, "dynamo", None
        staged = work_dir / "external" / file_name
        staged.parent.mkdir(parents=True, exist_ok=True)
        program.save(str(staged), external_data=True)  # weights go to '<file_name>.data' without a 2 GiB proto
        return onnx.load_model(str(staged), load_external_data=False), "dynamo", staged.parent / f"{file_name}.data"

    def _export_legacy(self, loaded: LoadedTorchModel, dynamic: bool, work_dir: Path) -> onnx.ModelProto:
        import torch

        staged = work_dir / "export.legacy.onnx"
        axes = {n: {0: "batch"} for n in loaded.input_names} if dynamic else None
        torch.onnx.export(
            loaded.module,
            loaded.example_inputs(),
            str(staged),
            input_names=loaded.input_names,
            dynamo=False,
            opset_version=self.config.opset,
            dynamic_axes=axes,
        )
        return onnx.load_model(str(staged))

    def _verify_inputs(self, loaded: LoadedTorchModel, ctx: PassContext) -> list[tuple[torch.Tensor, ...]]:
        """Calibration samples when the user gave data, else seeded random inputs (batch 1 and 2 when dynamic)."""
        import torch

        n = self.config.verify_samples
        if ctx.calibration is not None and not ctx.calibration.is_random:
            samples = ctx.calibration.samples(ctx.output_path, limit=n)
            return [tuple(torch.from_numpy(np.asarray(s[name])) for name in loaded.input_names) for s in samples]
        dynamic = loaded.dynamic_batch if loaded.program is not None else self.config.dynamic_batch
        return [
            loaded.example_inputs(batch=(1 + i % 2) if dynamic else None, seed=ctx.seed + 1 + i) for i in range(n)
        ]


def verify_onnx(
    onnx_path: Any,
    module: torch.nn.Module,
    feeds: list[tuple[torch.Tensor, ...]],
    tolerance_abs: float,
    tolerance_rel: float,
    source: str,
) -> float:
    """Run ``onnx_path`` with onnxruntime and ``module`` with torch on ``feeds``; return the max abs difference.

    Raises:
        PassError: a different number or shape of outputs, or a difference above
            ``tolerance_abs + tolerance_rel * max|torch output|`` (naming the output, the sample and the error).
    """
    import onnxruntime as ort
    import torch

    from .torch_train import flatten_outputs

    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    try:
        session = ort.InferenceSession(str(onnx_path), opts, providers=["CPUExecutionProvider"])
    except Exception as exc:
        raise PassError(
            f"the ONNX export of {source} does not load in onnxruntime ({first_line(exc)}); try another opset"
        ) from exc
    in_names = [i.name for i in session.get_inputs()]
    out_names = [o.name for o in session.get_outputs()]
    worst = 0.0
    for k, args in enumerate(feeds):
        with torch.no_grad():
            ref = [t.detach().cpu().numpy() for t in flatten_outputs(module(*args))]
        got = session.run(None, {name: a.numpy() for name, a in zip(in_names, args, strict=True)})
        if len(got) != len(ref):
            raise PassError(
                f"the ONNX export of {source} has {len(got)} outputs but torch returns {len(ref)}; "
                "return a tensor or a flat tuple of tensors from forward()"
            )
        for name, r, g in zip(out_names, ref, got, strict=True):
            g = np.asarray(g)
            if r.shape != g.shape:
                raise PassError(
                    f"the ONNX export of {source}: output '{name}' has shape {list(g.shape)} in onnxruntime but "
                    f"{list(r.shape)} in torch (sample {k}); export with dynamic_batch: false or fix the model"
                )
            err = _max_abs_diff(r, g)
            limit = tolerance_abs + tolerance_rel * (float(np.max(np.abs(r))) if r.size else 0.0)
            if err > limit:
                raise PassError(
                    f"the ONNX export of {source} does not match torch: output '{name}' differs by max abs "
                    f"{err:.4g} > tolerance {limit:.4g} (sample {k}); the exporter mis-translated an op or the "
                    "model's forward() is not a pure function of its inputs: fix it, or try another opset"
                )
            worst = max(worst, err)
    return worst


def _weight_bytes(module: torch.nn.Module) -> int:
    """Bytes of the parameters and buffers (each tensor counted once)."""
    tensors = {id(t): t for t in [*module.parameters(), *module.buffers()]}
    return sum(t.numel() * t.element_size() for t in tensors.values())


def _max_abs_diff(a: np.ndarray, b: np.ndarray) -> float:
    if a.size == 0:
        return 0.0
    if a.dtype.kind not in "fc":
        return 0.0 if np.array_equal(a, b) else float("inf")
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    both_nan = np.isnan(a64) & np.isnan(b64)
    diff = np.abs(a64 - b64)
    diff[both_nan] = 0.0
    diff[np.isnan(diff)] = np.inf
    return float(diff.max())


def convert_opset(model: onnx.ModelProto, target: int, source: str) -> onnx.ModelProto:
    """``model`` converted to opset ``target`` and checked (the converter can leave newer-opset attributes behind).

    Raises:
        PassError: the conversion failed or produced an invalid model.
    """
    try:
        converted = onnx.version_converter.convert_version(model, target)
        # The converter can leave attributes of the newer opset behind (ReduceMean's noop_with_empty_axes).
        onnx.checker.check_model(converted)
    except Exception as exc:  # the converter and checker raise RuntimeError, ValidationError and others
        raise PassError(
            f"export of {source}: converting opset {opset(model)} to {target} failed ({first_line(exc)}); "
            f"use opset >= {DEFAULT_OPSET} (the dynamo exporter's own) or a runtime that supports it"
        ) from exc
    return converted


def _rename_outputs(model: onnx.ModelProto, names: list[str], source: str) -> None:
    outputs = list(model.graph.output)
    if len(names) != len(outputs):
        raise PassError(
            f"export of {source}: output_names has {len(names)} names but the model has {len(outputs)} outputs "
            f"({', '.join(o.name for o in outputs)})"
        )
    mapping = {o.name: new for o, new in zip(outputs, names, strict=True)}
    for node in model.graph.node:
        for i, name in enumerate(node.output):
            if name in mapping:
                node.output[i] = mapping[name]
        for i, name in enumerate(node.input):
            if name in mapping:
                node.input[i] = mapping[name]
    for out in model.graph.output:
        out.name = mapping[out.name]


def _has_dynamic_batch(model: onnx.ModelProto) -> bool:
    inits = {t.name for t in model.graph.initializer}
    dims = [v.type.tensor_type.shape.dim for v in model.graph.input if v.name not in inits]
    return bool(dims) and all(len(d) > 0 and not d[0].HasField("dim_value") for d in dims)


@contextlib.contextmanager
def _quiet_exporter() -> Iterator[None]:
    """Keep the exporter's chatter off stdout (``--json`` prints only JSON there) and its deprecation noise down."""
    loggers = [logging.getLogger(n) for n in ("torch.onnx", "torch.export", "torch._export", "onnxscript")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            warnings.simplefilter("ignore", DeprecationWarning)
            warnings.filterwarnings("ignore", message=".*legacy TorchScript-based ONNX export.*")
            warnings.filterwarnings("ignore", category=UserWarning, module=r"torch\.onnx")
            with contextlib.redirect_stdout(sys.stderr):
                yield
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)
