"""``distill``: train a smaller student to reproduce a PyTorch teacher's outputs on the user's unlabeled data.

The student is either a width-multiplied copy of the teacher (every prunable Conv/Linear layer keeps
``width_multiplier`` of its channels, built with the structured-pruning machinery, the output layers kept whole)
or a model the user names as ``package.module:factory``. It is trained on the calibration samples to match the
teacher's outputs: KL divergence on temperature-softened logits for classifier-like outputs (Hinton et al.), MSE
otherwise. No labels are used.

It is short and honest: a held-out part of the data is never trained on, and the report gives the student's
fidelity to the teacher there (top-1 agreement, cosine similarity, MSE), before and after training, with the
parameter counts and the training time. A few hundred samples and a few dozen epochs on a CPU cannot replace a
real training run: read the fidelity before shipping the student.

The output is a ``.pt2`` ExportedProgram (PyTorch artifact); put ``export`` after this pass to get ONNX.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from enum import Enum
from typing import TYPE_CHECKING, Any

from pydantic import Field

from ..errors import first_line
from .base import Artifact, ArtifactFormat, Pass, PassConfig, PassContext, PassError, PassOutput
from .torch_extra import torch_unavailable
from .torch_output import save_pytorch_output

if TYPE_CHECKING:
    import torch

    from .torch_io import LoadedTorchModel
    from .torch_train import LossFn

LOW_AGREEMENT = 0.9  # warn when the student agrees with the teacher on fewer held-out samples than this


class DistillLoss(str, Enum):
    """What the student is trained to match."""

    AUTO = "auto"  # kl for one 2-D logits output, else mse
    KL = "kl"
    MSE = "mse"


class StudentInit(str, Enum):
    """How a width-multiplied student starts."""

    PRUNED = "pruned"  # the teacher's largest-norm channels (converges much faster on little data)
    RANDOM = "random"  # fresh initialisation of the narrowed architecture


class DistillConfig(PassConfig):
    student: str | None = Field(
        default=None,
        description="'package.module:factory' returning the student nn.Module (same inputs and output shapes as "
        "the teacher); None: a width-multiplied copy of the teacher.",
    )
    width_multiplier: float = Field(
        default=0.5,
        gt=0,
        lt=1,
        description="Fraction of channels the student keeps in each prunable layer (0.5: about 1/4 of the "
        "parameters of a conv chain). Ignored when 'student' is given.",
    )
    student_init: StudentInit = Field(
        default=StudentInit.PRUNED,
        description="Width-multiplied student: start from the teacher's largest-norm channels ('pruned') or "
        "from scratch ('random').",
    )
    epochs: int = Field(default=30, ge=1, description="Passes over the training samples.")
    lr: float = Field(default=2e-3, gt=0, description="Learning rate (Adam, cosine decay to 0).")
    batch_size: int = Field(default=64, ge=1, description="Samples per training step.")
    weight_decay: float = Field(default=0.0, ge=0, description="Adam weight decay.")
    loss: DistillLoss = Field(
        default=DistillLoss.AUTO, description="'kl', 'mse', or 'auto' (kl for classifier logits)."
    )
    temperature: float = Field(default=4.0, gt=0, description="Softmax temperature of the 'kl' loss.")
    holdout_fraction: float = Field(
        default=0.2, ge=0, lt=1, description="Fraction of the samples kept out of training to measure fidelity."
    )
    max_samples: int | None = Field(default=None, ge=2, description="Use at most this many calibration samples.")
    dynamic_batch: bool = Field(default=True, description="Save the .pt2 with a dynamic batch axis when possible.")


class DistillPass(Pass[DistillConfig]):
    name = "distill"
    summary = "distill a PyTorch teacher into a narrower (or user-named) student on unlabeled data -> .pt2"
    config_class = DistillConfig
    input_formats = frozenset({ArtifactFormat.PYTORCH})
    output_format = ArtifactFormat.PYTORCH
    needs_calibration = True

    @classmethod
    def availability(cls) -> str | None:
        return torch_unavailable(cls.name, pruning=True)

    def run(self, source: Artifact, ctx: PassContext) -> PassOutput:
        import torch

        from .torch_io import count_params, load_torch_model
        from .torch_prune import count_macs_params
        from .torch_train import batched_outputs, calibration_tensors, fidelity, seeded, train

        cfg = self.config
        teacher = load_torch_model(source.path, ctx.input_shapes)
        warn: list[str] = []
        with seeded(ctx.seed):
            student = self._student(teacher, ctx, warn)
        inputs, _ = calibration_tensors(
            ctx.calibration, teacher, ctx.work_dir, limit=cfg.max_samples, purpose="distillation"
        )
        if ctx.calibration is not None and ctx.calibration.is_random:
            warn.append(
                "distill: training on RANDOM inputs (no --calib data): the student learns the teacher on noise, "
                "not on your data; pass --calib DATA"
            )
        n = int(inputs[0].shape[0])
        n_hold = int(round(n * cfg.holdout_fraction))
        if n - n_hold < 1:
            raise PassError(f"distill: {n} samples leave none to train on; give more data or lower holdout_fraction")
        order = torch.randperm(n, generator=torch.Generator().manual_seed(ctx.seed))
        train_idx, hold_idx = order[n_hold:], order[:n_hold]
        eval_idx = hold_idx if n_hold else train_idx
        targets = batched_outputs(teacher.module, inputs, cfg.batch_size)
        kind, loss_fn = resolve_loss(cfg.loss, targets, cfg.temperature)
        eval_inputs = [t[eval_idx] for t in inputs]
        eval_targets = [t[eval_idx] for t in targets]
        before = fidelity(batched_outputs(student, eval_inputs, cfg.batch_size), eval_targets)

        def progress(done: int, total: int) -> None:
            ctx.reporter.progress("distill (epochs)", done, total)

        with seeded(ctx.seed):
            stats = train(
                student, [t[train_idx] for t in inputs], [t[train_idx] for t in targets], loss_fn,
                epochs=cfg.epochs, lr=cfg.lr, batch_size=cfg.batch_size, seed=ctx.seed,
                weight_decay=cfg.weight_decay, progress=progress,
            )
        after = fidelity(batched_outputs(student, eval_inputs, cfg.batch_size), eval_targets)
        example = teacher.example_inputs(seed=ctx.seed)
        report: dict[str, Any] = {
            "student": cfg.student or f"width x{cfg.width_multiplier} ({cfg.student_init.value} init)",
            "teacher_params": count_params(teacher.module),
            "student_params": count_params(student),
            "loss": kind,
            "temperature": cfg.temperature if kind == DistillLoss.KL.value else None,
            "samples_train": int(train_idx.numel()),
            "samples_holdout": int(n_hold),
            "fidelity_on": "holdout" if n_hold else "training samples (holdout_fraction is 0)",
            "fidelity_before": before,
            "fidelity": after,
            "training": stats.as_report(),
            "data": "random" if ctx.calibration is not None and ctx.calibration.is_random else "calibration",
        }
        report["params_ratio"] = round(report["student_params"] / max(1, report["teacher_params"]), 4)
        if teacher.is_eager:
            report["teacher_macs"] = count_macs_params(teacher.module, example)[0]
        report["student_macs"] = count_macs_params(student, example)[0]
        agreement = after["top1_agreement"]
        if agreement is not None and agreement < LOW_AGREEMENT:
            warn.append(
                f"distill: the student agrees with the teacher on only {agreement:.1%} of {after['samples']} "
                "held-out samples; train longer (epochs), on more data, or keep more width"
            )
        return save_pytorch_output(student, teacher, source, ctx, dynamic_batch=cfg.dynamic_batch,
                                   what="the distilled student", report=report, warnings=warn)

    def _student(self, teacher: LoadedTorchModel, ctx: PassContext, warn: list[str]) -> torch.nn.Module:
        """The user's student (checked to fit the teacher's inputs and outputs) or a narrowed teacher copy."""
        from .torch_io import load_torch_model
        from .torch_prune import prune_channels, reinitialize
        from .torch_train import batched_outputs

        cfg = self.config
        example = teacher.example_inputs(seed=ctx.seed)
        if cfg.student:
            shapes = {i.name: i.shape for i in teacher.inputs}
            loaded = load_torch_model(cfg.student, shapes)
            if not loaded.is_eager:
                raise PassError(f"distill: student '{cfg.student}' must be 'package.module:factory' (an nn.Module)")
            student = loaded.module
        else:
            if not teacher.is_eager:
                raise PassError(
                    f"distill: a width-multiplied student needs the teacher's nn.Module, but {teacher.source} is a "
                    f"{teacher.kind.value} graph; give the teacher as 'package.module:factory' or name a student"
                )
            student = copy.deepcopy(teacher.module)
            try:
                result = prune_channels(student, example, ratio=1 - cfg.width_multiplier)
            except Exception as exc:  # torch-pruning raises many types on unsupported graphs
                raise PassError(
                    f"distill: narrowing {teacher.source} failed ({type(exc).__name__}: {first_line(exc)}); "
                    "name a student with 'student: package.module:factory'"
                ) from exc
            warn.extend(result.warnings)
            if not result.changed_layers:
                raise PassError(
                    f"distill: {teacher.source} has no Conv/Linear layer to narrow besides its output layers; "
                    "name a student with 'student: package.module:factory'"
                )
            if cfg.student_init is StudentInit.RANDOM:
                reinitialize(student)
        try:
            got = batched_outputs(student, example, len(example[0]))
        except Exception as exc:
            raise PassError(
                f"distill: the student does not run on the teacher's inputs ({type(exc).__name__}: "
                f"{first_line(exc)}); make its forward() take the same inputs"
            ) from exc
        want = batched_outputs(teacher.module, example, len(example[0]))
        if [tuple(t.shape) for t in got] != [tuple(t.shape) for t in want]:
            raise PassError(
                f"distill: the student's output shapes {[list(t.shape) for t in got]} differ from the teacher's "
                f"{[list(t.shape) for t in want]}; the student must produce the same outputs"
            )
        return student


def resolve_loss(kind: DistillLoss, teacher_outputs: Sequence[torch.Tensor], temperature: float) -> tuple[str, LossFn]:
    """The concrete loss for ``kind`` ('auto': kl for classifier-like logits, else mse) and its function.

    Raises:
        PassError: 'kl' asked for outputs that are not one 2-D logits tensor.
    """
    from .torch_train import classifier_like, kl_loss, mse_loss

    is_cls = classifier_like(teacher_outputs)
    if kind is DistillLoss.KL and not is_cls:
        shapes = [list(t.shape) for t in teacher_outputs]
        raise PassError(f"loss 'kl' needs one [batch, classes] logits output but the teacher returns {shapes}; use mse")
    if kind is DistillLoss.KL or (kind is DistillLoss.AUTO and is_cls):
        return DistillLoss.KL.value, kl_loss(temperature)
    return DistillLoss.MSE.value, mse_loss
