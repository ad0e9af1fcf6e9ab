"""Retention of a generative model: its next-token behaviour on a held-out text against an FP32 reference.

The agent scores each folder on the device (``edgeopt_agent.llm_eval``: the text tokenized by the folder's own
tokenizer, windows run teacher-forced, a few greedy continuations); the host compares the two score files here.
The reference runs first; its top-K ids per position go to the candidate's run, which reads its own
log-probabilities at those ids, so the KL divergence needs no whole vocabularies on the wire (exact when K covers
the vocabulary; otherwise the distributions are compared on the reference's top-K plus one "rest" bucket, a lower
bound of the true KL). Definitions: docs/llm.md, "Retention and sweep".
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from edgeopt_agent.protocol import Request

from ..errors import InputError
from ..evaluation import resolve_metric
from ..inbound import MAX_ARRAY_FILE_BYTES, InboundError, load_arrays
from ..registry import delivering_runtime, format_registry
from ..registry.kind_spec import GENERATIVE
from ..runners import ProgressSink, Runner, raise_for_error
from ..runners.select import use_runner
from ..settings import RemoteSpec

Scores = dict[str, np.ndarray]
BUILTIN_METRICS = ("top1", "top1_clear", "topk", "kl", "ppl")
SWEEP_METRIC = "top1_clear"  # what a sweep decides on unless --metric says otherwise: near-ties cannot flip it
CLEAR_MARGIN = math.log(1.5)  # a "clear" next token: the reference's top-1 at least 1.5x as likely as its runner-up


class RetentionSettings(BaseModel):
    """What the agent scores: windows of the text, the statistics' sizes, the greedy continuations."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    window: int = Field(default=64, ge=2, description="Tokens per teacher-forced window (from an empty cache).")
    windows: int = Field(default=8, ge=1, description="Most windows scored (consecutive, from the text's start).")
    top_k: int = Field(default=5, ge=1, description="k of the top-k overlap.")
    kl_top: int = Field(default=2048, ge=1, description="Reference ids per position the KL reads (exact when >= "
                                                       "the vocabulary).")
    prompts: int = Field(default=2, ge=1, description="Greedy continuations (prompts: the first windows' starts).")
    prompt_tokens: int = Field(default=16, ge=1, description="Tokens per greedy prompt.")
    gen_tokens: int = Field(default=16, ge=1, description="Greedy tokens generated per prompt.")
    threads: int = Field(default=0, ge=0, description="Runtime threads (0: the runtime's default).")
    max_duration_s: float = Field(default=600.0, gt=0, description="Agent watchdog per folder, s.")


class LlmRetention(BaseModel):
    """A candidate's next-token behaviour against the reference's, on the same tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    metric: str = Field(description="Primary metric: top1, topk, kl, ppl or package.module:function.")
    retention: float = Field(description="The primary metric as a retention (1.0: the reference's behaviour).")
    top1_agreement: float = Field(description="Share of positions whose most likely next token is the reference's.")
    top1_clear_agreement: float | None = Field(
        default=None, description="top1_agreement over the clear positions only (the reference's top-1 at least "
                                  "1.5x as likely as its runner-up): near-tied next tokens, which any rounding can "
                                  "flip, do not count. The whole top1_agreement when no position is clear.")
    clear_positions: int | None = Field(default=None, description="Positions whose reference top-1 is clear.")
    topk_overlap: float = Field(description="Mean share of the reference's top-k next tokens in the candidate's.")
    kl_mean: float = Field(description="Mean KL(reference || candidate) of the next-token distributions, nats.")
    kl_exact: bool = Field(description="False: compared on the reference's top-K ids plus a rest bucket (a lower "
                                       "bound).")
    ppl_reference: float = Field(description="Perplexity of the reference on the scored tokens.")
    ppl_candidate: float = Field(description="Perplexity of the candidate on the scored tokens.")
    first_divergence: list[int | None] = Field(description="Per greedy prompt: index of the first generated token "
                                                           "that differs from the reference's (None: none did).")
    greedy_tokens: int = Field(description="Tokens generated per greedy prompt.")
    custom_value: float | None = Field(default=None, description="A custom metric's value (its retention: value / "
                                                                 "its value on the reference itself).")
    positions: int = Field(description="Next-token positions scored (windows x (window - 1)).")
    windows: int = Field(description="Windows scored.")
    top_k: int
    kl_top: int


def read_text(path: Path) -> str:
    """The held-out text; a missing, unreadable, non-UTF-8 or empty file is an :class:`InputError`."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"eval text {path} not found: pass a plain UTF-8 .txt file with --eval")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"eval text {path} is not UTF-8 text (byte {exc.start}): pass a plain .txt file") from None
    except OSError as exc:
        raise InputError(f"cannot read eval text {path} ({exc.strerror}): check the permissions") from None
    if not text.strip():
        raise InputError(f"eval text {path} is empty: pass a held-out text of a few thousand characters")
    return text


def runtime_of(folder: Path) -> str:
    """The generative runtime that scores ``folder``: the one whose native format claims it (checked)."""
    folder = Path(folder)
    formats = [f for f in format_registry().all()
               if f.directory and f.kind == GENERATIVE and delivering_runtime(f.name) is not None]
    desc = next((f for f in formats if f.claims_directory(folder)), None)
    if desc is None:
        marks = " or ".join(f.entry_file or f.name for f in formats)
        raise InputError(f"{folder} is not an LLM runtime folder (no {marks}): pass a folder written by "
                         "'edgeopt optimize LLM_DIR'")
    desc.check_directory(folder)
    return delivering_runtime(desc.name).name  # type: ignore[union-attr]


def score_folder(folder: Path, text: str, settings: RetentionSettings, runner: Runner, *,
                 kl_ids: np.ndarray | None = None, runtime_options: Mapping[str, Any] | None = None,
                 progress: ProgressSink | None = None) -> Scores:
    """The agent's score arrays for ``folder`` on ``text`` (keys: edgeopt_agent.llm_eval).

    Raises:
        InputError: not an LLM folder, a text shorter than one window (exit 2).
        RunnerError: the agent or the runtime failed (exit 3).
    """
    runtime = runtime_of(folder)
    with tempfile.TemporaryDirectory(prefix="edgeopt-llm-ret-") as tmp:
        feed, out = Path(tmp) / "eval.npz", Path(tmp) / "scores.npz"
        arrays: dict[str, np.ndarray] = {"text": np.frombuffer(text.encode("utf-8"), dtype=np.uint8)}
        for key in ("window", "windows", "top_k", "kl_top", "prompts", "prompt_tokens", "gen_tokens"):
            arrays[key] = np.asarray([getattr(settings, key)], dtype=np.int64)
        if kl_ids is not None:
            arrays["kl_ids"] = np.asarray(kl_ids, dtype=np.int32)
        np.savez(feed, **arrays)  # type: ignore[arg-type]  # numpy stub: **kwds may hit allow_pickle: bool
        request = Request(model_path=str(folder), runtime=runtime, runtime_options=dict(runtime_options or {}),
                          threads=settings.threads, max_duration_s=settings.max_duration_s, eval_npz=str(feed),
                          eval_output=str(out), progress_interval_s=0)
        raise_for_error(runner.evaluate(request, Path(folder), progress), runner.name)
        try:
            scores = load_arrays(out, max_bytes=MAX_ARRAY_FILE_BYTES)
        except (OSError, InboundError) as exc:
            raise InputError(f"the agent on {runner.name} wrote unreadable retention outputs ({exc}); update the "
                             "agent on the device") from None
        if not isinstance(scores, dict):
            raise InputError(f"the agent on {runner.name} wrote one array, not an .npz archive; update the agent")
        return scores


def _kl(ref_logp: np.ndarray, cand_logp: np.ndarray) -> np.ndarray:
    """Per-position KL(p || q) on the given ids plus the rest bucket (the mass outside them)."""
    p, q = np.exp(ref_logp.astype(np.float64)), np.exp(cand_logp.astype(np.float64))
    kl = (p * (ref_logp.astype(np.float64) - cand_logp.astype(np.float64))).sum(axis=-1)
    p_rest = np.clip(1.0 - p.sum(axis=-1), 0.0, 1.0)
    q_rest = np.clip(1.0 - q.sum(axis=-1), 1e-12, 1.0)
    rest = np.where(p_rest > 1e-9, p_rest * (np.log(np.maximum(p_rest, 1e-12)) - np.log(q_rest)), 0.0)
    return np.maximum(kl + rest, 0.0)


def _first_divergence(ref: np.ndarray, cand: np.ndarray) -> list[int | None]:
    out: list[int | None] = []
    for a, b in zip(ref, cand, strict=True):
        diff = np.flatnonzero(a != b)
        out.append(int(diff[0]) if diff.size else None)
    return out


def _clear(ref_top_logp: np.ndarray) -> np.ndarray:
    """Positions whose reference top-1 is clear: its log-probability leads the runner-up's by ``CLEAR_MARGIN``
    (every position when only one id per position was scored)."""
    if ref_top_logp.shape[-1] < 2:
        return np.ones(ref_top_logp.shape[:-1], dtype=bool)
    lp = ref_top_logp.astype(np.float64)
    return np.asarray(lp[..., 0] - lp[..., 1] >= CLEAR_MARGIN)


CustomFn = Callable[[Scores, Scores, Any], float]


def compare(reference: Scores, candidate: Scores, *, metric: str = "top1", vocab_covered: bool = False
            ) -> LlmRetention:
    """The retention record of ``candidate`` against ``reference`` (both from :func:`score_folder`).

    Raises:
        InputError: the two were scored on different tokens (their tokenizers differ), or a bad metric.
    """
    if reference["tokens"].shape != candidate["tokens"].shape or not np.array_equal(reference["tokens"],
                                                                                     candidate["tokens"]):
        raise InputError("the candidate's tokenizer splits the eval text differently from the reference's: compare "
                         "folders exported from the same model")
    ref_top, cand_top = reference["top_ids"], candidate["top_ids"]
    k = ref_top.shape[-1]
    overlap = (ref_top[..., :, None] == cand_top[..., None, :]).any(axis=-1).sum(axis=-1) / k
    kl = float(_kl(reference["kl_logp"], candidate["kl_logp"]).mean())
    ppl_ref = float(np.exp(-reference["target_logp"].astype(np.float64).mean()))
    ppl_cand = float(np.exp(-candidate["target_logp"].astype(np.float64).mean()))
    agree = ref_top[..., 0] == cand_top[..., 0]
    clear = _clear(reference["top_logp"])
    values = {"top1": float(agree.mean()), "topk": float(overlap.mean()),
              "top1_clear": float(agree[clear].mean()) if clear.any() else float(agree.mean()),
              "kl": float(np.exp(-kl)), "ppl": ppl_ref / ppl_cand if ppl_cand > 0 else 0.0}
    custom = None
    if metric in values:
        retention = values[metric]
    else:
        fn = resolve_metric(metric).score
        custom = float(fn(reference, candidate, None))  # type: ignore[arg-type]
        base = float(fn(reference, reference, None))  # type: ignore[arg-type]
        retention = custom / base if base else (1.0 if custom == 0 else 0.0)
    return LlmRetention(
        metric=metric, retention=retention, top1_agreement=values["top1"], topk_overlap=values["topk"],
        top1_clear_agreement=values["top1_clear"], clear_positions=int(clear.sum()),
        kl_mean=kl, kl_exact=vocab_covered, ppl_reference=ppl_ref, ppl_candidate=ppl_cand,
        first_divergence=_first_divergence(reference["greedy"], candidate["greedy"]),
        greedy_tokens=int(reference["greedy"].shape[-1]), custom_value=custom,
        positions=int(ref_top.shape[0] * ref_top.shape[1]), windows=int(ref_top.shape[0]), top_k=k,
        kl_top=int(reference["kl_ids"].shape[-1]))


def check_metric(metric: str | None, default: str = "top1") -> str:
    """``metric`` (else ``default``) if it is a built-in LLM metric or an importable ``package.module:function``."""
    name = metric or default
    if name in BUILTIN_METRICS:
        return name
    if ":" not in name:
        raise InputError(f"unknown LLM metric {name!r}; known: {', '.join(BUILTIN_METRICS)}, or "
                         "package.module:function(reference_scores, candidate_scores, labels) -> float")
    resolve_metric(name)
    return name


def vocab_covered(scores: Scores) -> bool:
    """Whether the reference's K ids per position hold all its probability mass (then the KL is exact)."""
    logp = scores["kl_logp"].astype(np.float64)
    return bool(np.allclose(np.exp(logp).sum(axis=-1), 1.0, atol=1e-4))


def llm_retention(candidate_dir: str | Path, reference_dir: str | Path, text: str | Path, *,
                  metric: str | None = None, settings: RetentionSettings | None = None,
                  reference_options: Mapping[str, Any] | None = None,
                  candidate_options: Mapping[str, Any] | None = None, runner: Runner | None = None,
                  remote: RemoteSpec | None = None, progress: ProgressSink | None = None) -> LlmRetention:
    """Retention of the LLM folder ``candidate_dir`` against ``reference_dir`` (usually its FP32 export on the same
    runtime) on the held-out text file ``text``, both scored by the agent (here, or on ``remote`` over SSH).

    Raises:
        InputError: a bad text file, folder or metric, a text shorter than one window (exit 2).
        RunnerError: the agent or a runtime failed (exit 3).
    """
    name = check_metric(metric)
    body = read_text(Path(text))
    settings = settings or RetentionSettings()
    with use_runner(runner, remote) as placed:
        ref = score_folder(Path(reference_dir), body, settings, placed.runner, runtime_options=reference_options,
                           progress=progress)
        cand = score_folder(Path(candidate_dir), body, settings, placed.runner, kl_ids=ref["kl_ids"],
                            runtime_options=candidate_options, progress=progress)
    return compare(ref, cand, metric=name, vocab_covered=vocab_covered(ref))
