"""The retention gate of an LLM spec: the qualified folder's next-token behaviour against its FP32 reference.

:func:`edgeopt.llm.retention.llm_retention` scores both folders on the spec's held-out text (``llm.eval``) through
the agent: next-token top-1 agreement (the gate's retention), top-k overlap, KL, perplexity and the first greedy
divergence. The reference is the FP32 export of the spec's Hugging Face folder **on the qualified folder's runtime**
(built once into the work directory; OpenVINO's at ``inference_precision: f32``, since this runtime runs FP32 in
BF16 by default on AMX/AVX512_BF16 CPUs), or, when the spec's model is already an exported folder of that runtime,
that folder. A spec without ``llm.eval``, or whose reference cannot be made (an exported ``model`` of another
runtime), gets a retention result without a value whose note says why: the gate FAILS saying so (a gate is never
passed on a value that was not measured).
"""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError, RunnerError
from ..registry import get_format, get_runtime
from ..registry.kind_spec import GENERATIVE
from ..registry.lookup import format_of_kind
from .result import RetentionResult


class LlmRetentionUnavailable(InputError):
    """LLM retention cannot be computed for this spec (the gate then fails with this reason)."""


def fp32_reference(reference: Path, candidate: Path, work: Path) -> Path:
    """The FP32 folder the ``candidate`` is judged against, on its runtime (exported from ``reference`` when that is
    a Hugging Face folder; reused when already built).

    Raises:
        LlmRetentionUnavailable: ``reference`` is an exported folder of another runtime.
    """
    runtime = format_of_kind(candidate, GENERATIVE)
    ref_fmt = format_of_kind(reference, GENERATIVE)
    if ref_fmt == runtime:
        return reference
    if ref_fmt is None or get_format(ref_fmt).deployable:
        raise LlmRetentionUnavailable(f"the reference {reference} is a {ref_fmt} folder and the qualified one a "
                                      f"{runtime} folder: retention needs the FP32 export of the same runtime; "
                                      "set model.path to the Hugging Face folder")
    out = work / f"fp32-{runtime}"
    if format_of_kind(out, GENERATIVE) == runtime:
        return out
    from ..llm.sweep_levels import reference_level

    level = reference_level(_runtime_of(str(runtime)))
    level.exporter().export(reference, out, level.settings)
    return out


def _runtime_of(fmt: str) -> str:
    """The generative runtime whose native format ``fmt`` is (the descriptor that ``delivers`` it)."""
    from ..registry import delivering_runtime

    desc = delivering_runtime(fmt)
    if desc is None:
        raise LlmRetentionUnavailable(f"no registered runtime delivers {fmt} folders: retention cannot be scored")
    return desc.name


def llm_retention(reference: Path, candidate: Path, *, text: Path | None, work: Path) -> RetentionResult:
    """Retention of the ``candidate`` LLM folder against the FP32 export of ``reference`` on ``text``.

    Raises:
        LlmRetentionUnavailable: no text, or no reference of the candidate's runtime.
        InputError: a bad text file (exit 2). RunnerError: the agent failed (exit 3).
    """
    if text is None:
        raise LlmRetentionUnavailable("gates.retention on an LLM spec needs llm.eval: a held-out UTF-8 text file "
                                      "(next-token agreement is scored on it)")
    from ..llm.retention import llm_retention as score

    ref = fp32_reference(reference, candidate, work)
    runtime = _runtime_of(str(format_of_kind(candidate, GENERATIVE)))
    res = score(candidate, ref, text, reference_options=dict(get_runtime(runtime).reference_options) or None)
    divergence = [d for d in res.first_divergence if d is not None]
    notes = [f"next-token top-1 agreement {res.top1_agreement:.4f} over {res.positions} positions "
             f"({res.windows} windows); top-k overlap {res.topk_overlap:.4f}; mean KL {res.kl_mean:.3g} nats"
             f"{'' if res.kl_exact else ' (lower bound)'}; perplexity {res.ppl_reference:.2f} -> "
             f"{res.ppl_candidate:.2f}; first greedy divergence "
             f"{min(divergence) if divergence else 'none'} of {res.greedy_tokens} tokens"]
    return RetentionResult(metric=f"llm {res.metric}", reference_value=1.0, candidate_value=res.retention,
                           retention=res.retention, samples=res.positions, data=str(text),
                           evaluated_on=f"host-{runtime}", reference_path=str(ref), candidate_path=str(candidate),
                           notes=notes)


def retention_or_reason(reference: Path, candidate: Path, *, text: Path | None, work: Path) -> RetentionResult:
    """:func:`llm_retention`'s result, or a result without a value whose note says why (the gate fails on it)."""
    try:
        return llm_retention(reference, candidate, text=text, work=work)
    except (LlmRetentionUnavailable, RunnerError) as exc:  # a bad text file stays a spec error (exit 2)
        return RetentionResult(metric="llm top1", reference_value=None, candidate_value=None,
                               retention=None, samples=0, data=str(text) if text else "none",
                               evaluated_on="host", reference_path=str(reference), candidate_path=str(candidate),
                               notes=[str(exc)])
