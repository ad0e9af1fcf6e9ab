"""``prune_structured``: remove whole channels from a PyTorch model's Conv/Linear layers, optionally fine-tune.

Unlike magnitude pruning (zeros in a dense tensor: same size, same speed unless a runtime exploits sparsity),
structured pruning makes every pruned layer narrower, so the exported graph has fewer parameters and MACs on any
runtime. torch-pruning traces the model's dependencies so that a pruned channel is also removed from the
BatchNorm after it, the next layer's inputs and residual partners. The layers producing the model's outputs are
left alone (the classifier keeps its classes).

Pruning needs the eager ``nn.Module`` (``package.module:factory``); a ``.pt2`` or TorchScript file is a graph of
functional ops with nothing to narrow. The output is a ``.pt2`` ExportedProgram (PyTorch artifact): the pruned
architecture no longer matches the factory's code, and a ``.pt2`` carries it. Put ``export`` after this pass to
get ONNX.

Fine-tuning (``epochs`` > 0) trains on the calibration data: on its ``labels`` (cross-entropy) when the ``.npz``
has them, else towards the unpruned model's outputs (distillation), so no labels are needed.
"""

from __future__ import annotations

import copy
import time
from enum import Enum
from typing import TYPE_CHECKING, Any

from pydantic import Field

from ..errors import InputError, first_line
from .base import Artifact, ArtifactFormat, Pass, PassConfig, PassContext, PassError, PassOutput
from .distill import DistillLoss
from .torch_extra import torch_unavailable
from .torch_output import save_pytorch_output

if TYPE_CHECKING:
    from .torch_train import LossFn


class Importance(str, Enum):
    """How channels are ranked: the smallest-norm channels are removed."""

    L1 = "l1"
    L2 = "l2"


class PruneStructuredConfig(PassConfig):
    pruning_ratio: float = Field(
        default=0.5,
        gt=0,
        lt=1,
        description="Fraction of output channels removed from each prunable Conv/Linear layer (0.5: half). "
        "Parameters and MACs of a chain of such layers shrink by about (1 - ratio)^2.",
    )
    importance: Importance = Field(default=Importance.L1, description="Channel ranking: 'l1' or 'l2' weight norm.")
    ignore_layers: list[str] = Field(
        default_factory=list,
        description="Module names (fnmatch patterns on named_modules(), e.g. 'features.0' or 'head.*') to leave "
        "unpruned, besides the output layers.",
    )
    ignore_output_layers: bool = Field(
        default=True,
        description="Leave the layers producing the model's outputs (the final classifier, detection heads) "
        "unpruned, so the output shape does not change.",
    )
    round_to_channels: int | None = Field(
        default=None,
        ge=1,
        description="Keep channel counts multiples of this (8 suits most accelerators); attention head counts "
        "are always respected.",
    )
    global_pruning: bool = Field(
        default=False, description="Rank channels across all layers (uneven widths) instead of per layer."
    )
    epochs: int = Field(default=0, ge=0, description="Fine-tuning epochs on the calibration data (0: none).")
    lr: float = Field(default=1e-3, gt=0, description="Fine-tuning learning rate (Adam, cosine decay).")
    batch_size: int = Field(default=32, ge=1, description="Fine-tuning batch size, in samples.")
    max_samples: int | None = Field(default=None, ge=1, description="Use at most this many calibration samples.")
    fine_tune_loss: DistillLoss = Field(
        default=DistillLoss.AUTO,
        description="Loss without labels: 'kl' on softened logits, 'mse' on outputs, 'auto' (kl for classifier "
        "logits). With labels in the data, cross-entropy is used.",
    )
    temperature: float = Field(default=2.0, gt=0, description="Softmax temperature of the 'kl' fine-tuning loss.")
    dynamic_batch: bool = Field(default=True, description="Save the .pt2 with a dynamic batch axis when possible.")


class PruneStructuredPass(Pass[PruneStructuredConfig]):
    name = "prune_structured"
    summary = "structured channel pruning of a PyTorch model (torch-pruning), optional short fine-tune -> .pt2"
    config_class = PruneStructuredConfig
    input_formats = frozenset({ArtifactFormat.PYTORCH})
    output_format = ArtifactFormat.PYTORCH

    @classmethod
    def availability(cls) -> str | None:
        return torch_unavailable(cls.name, pruning=True)

    def run(self, source: Artifact, ctx: PassContext) -> PassOutput:
        from .torch_io import count_params, load_torch_model
        from .torch_prune import count_macs_params, prune_channels
        from .torch_train import seeded

        cfg = self.config
        loaded = load_torch_model(source.path, ctx.input_shapes)
        if not loaded.is_eager:
            raise PassError(
                f"prune_structured needs the model's nn.Module, but {source.path} is a {loaded.kind.value} graph "
                "with no Conv/Linear modules to narrow; give 'package.module:factory'"
            )
        if cfg.epochs and ctx.calibration is None:
            raise InputError(
                f"prune_structured fine-tuning (epochs: {cfg.epochs}) needs training data: pass --calib DATA "
                "(an .npz keyed by input name, with 'labels' if you have them), or set epochs: 0"
            )
        module = loaded.module
        example = loaded.example_inputs(seed=ctx.seed)
        macs_before, params_before = count_macs_params(module, example)
        teacher = copy.deepcopy(module) if cfg.epochs else None
        started = time.perf_counter()
        try:
            with seeded(ctx.seed):
                result = prune_channels(
                    module,
                    example,
                    ratio=cfg.pruning_ratio,
                    importance_p=1 if cfg.importance is Importance.L1 else 2,
                    ignore=cfg.ignore_layers,
                    ignore_output_layers=cfg.ignore_output_layers,
                    round_to=cfg.round_to_channels,
                    global_pruning=cfg.global_pruning,
                )
            module.eval()
            module(*example)
        except Exception as exc:  # torch-pruning and a broken forward raise many types
            raise PassError(
                f"structured pruning of {source.path} failed ({type(exc).__name__}: {first_line(exc)}); add the "
                "offending layers to ignore_layers, or use prune_magnitude on the ONNX model"
            ) from exc
        prune_seconds = time.perf_counter() - started
        if not result.changed_layers:
            raise PassError(
                f"prune_structured removed no channel from {source.path}: every Conv/Linear layer is an output "
                "layer or ignored; loosen ignore_layers"
            )
        macs_after, params_after = count_macs_params(module, example)
        report: dict[str, Any] = {
            "pruning_ratio": cfg.pruning_ratio,
            "params_before": params_before,
            "params_after": params_after,
            "params_reduction": round(1 - params_after / params_before, 4) if params_before else 0.0,
            "macs_before": macs_before,
            "macs_after": macs_after,
            "mac_reduction": round(1 - macs_after / macs_before, 4) if macs_before else 0.0,
            "prune_seconds": round(prune_seconds, 3),
            "layers_pruned": len(result.changed_layers),
            "layer_widths": result.changed_layers,
            "ignored_layers": result.ignored,
            "output_layers": result.output_layers,
            "trainable_params_after": count_params(module),
        }
        warn = list(result.warnings)
        if teacher is not None:
            report["fine_tune"] = self._fine_tune(module, teacher, loaded, ctx, warn)
        return save_pytorch_output(module, loaded, source, ctx, dynamic_batch=cfg.dynamic_batch,
                                   what=f"the pruned model of {source.path}", report=report, warnings=warn)

    def _fine_tune(
        self, module: Any, teacher: Any, loaded: Any, ctx: PassContext, warn: list[str]
    ) -> dict[str, Any]:
        from .distill import resolve_loss
        from .torch_train import batched_outputs, calibration_tensors, classifier_like, label_loss, seeded, train

        cfg = self.config
        inputs, labels = calibration_tensors(
            ctx.calibration, loaded, ctx.work_dir, limit=cfg.max_samples, purpose="prune_structured fine-tuning"
        )
        if ctx.calibration is not None and ctx.calibration.is_random:
            warn.append("prune_structured: fine-tuning on RANDOM inputs (no --calib data): accuracy may get worse")

        def progress(done: int, total: int) -> None:
            ctx.reporter.progress("prune_structured fine-tune (epochs)", done, total)

        teacher_outputs = batched_outputs(teacher, inputs, cfg.batch_size)
        loss_fn: LossFn
        if labels is not None and classifier_like(teacher_outputs):
            targets, loss_fn, mode = [labels], label_loss, "labels"
        else:
            if labels is not None:
                warn.append("prune_structured: the data has labels but the model's output is not [batch, classes] "
                            "logits; fine-tuning towards the unpruned model's outputs instead")
            targets = teacher_outputs
            kind, loss_fn = resolve_loss(cfg.fine_tune_loss, targets, cfg.temperature)
            mode = f"distill-{kind}"
        with seeded(ctx.seed):
            stats = train(
                module, inputs, targets, loss_fn,
                epochs=cfg.epochs, lr=cfg.lr, batch_size=cfg.batch_size, seed=ctx.seed, progress=progress,
            )
        return {"mode": mode, "samples": int(inputs[0].shape[0]), **stats.as_report()}
