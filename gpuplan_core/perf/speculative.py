"""Speculative decoding in the step model: a draft proposes ``k`` tokens, the target model checks them in one verify
step of ``k + 1`` tokens per sequence, keeps the accepted run of drafted tokens and adds one token of its own.

Tokens per verify step: each drafted token is accepted with probability ``a`` independently, and the first
rejection ends the run, so the expected tokens a verify step yields are 1 + a + a^2 + ... + a^k
= (1 - a^(k+1)) / (1 - a), and k + 1 at a = 1 (Leviathan, Kalman and Matias 2023, "Fast Inference from Transformers
via Speculative Decoding", ICML, eq. 1). Time per output token: (k draft steps + one verify step) / that count
(``spec_tpot_s``; the static view's, predict.py).

The drafts themselves (the user's draft model, the model's MTP module, the acceptance's source) and what a
replica holds for one: model/draft.py.

One engine, static or under load: a speculating replica's decode step (steps.StepModel.step_s, step_time.step_s)
is k steps of the draft over the decoding sequences and one verify step of the target, k + 1 tokens per sequence,
and writes ``expected_tokens_per_verify`` tokens per sequence on average. The static view (predict.py) divides its
mean step by that count (``spec_tpot_s``: (k draft steps + one verify step) / the count); the serving step loop
(step_loop.py) runs the same steps under load, each sequence writing that count a step (its KV cache growing by as
much, with k + 1 slots held for the step's verify), so first-token time, time per token and capacity all come from
it. The draft reads every prompt too: a step with prompt chunks is the target's pass and then one pass of the
draft over the same chunks (step_time.step_s; the static view's first token likewise, predict.py), as vLLM (V1's
drafter proposes after every forward, prefill included), SGLang (EAGLE's draft extend after the target's prefill)
and TensorRT-LLM (a two-model draft runs its own context phase) all do. A speculating replica holds the draft's
weights and its KV cache beside the target's (memory/inference.py). The recommender weighs speculation where the
user names a draft or the model ships an MTP module (plan/speculation.py).
"""

from __future__ import annotations

from dataclasses import replace

from ..model.draft import (  # noqa: F401  (re-exported: the drafts live in model/draft.py)
    MTP_ACCEPTANCE,
    MTP_SOURCE,
    SMALLEST_DRAFT_PARAMS,
    Draft,
    draft_for,
    expected_tokens_per_verify,
    mtp_draft,
    replica_draft,
    user_draft,
)
from .roofline import Workload


def spec_tpot_s(draft_step_s: float, verify_step_s: float, k: int, acceptance: float) -> float:
    """Seconds per output token with speculation: ``k`` draft steps and one verify step of k + 1 tokens per
    sequence, over the tokens that verify step yields on average."""
    return (k * draft_step_s + verify_step_s) / expected_tokens_per_verify(k, acceptance)


def spec_note(wl: Workload) -> str:
    """What a speculating workload's figures assume, in words."""
    k, a = wl.spec_tokens, wl.spec_acceptance
    return (
        f"Speculative decoding: {k} draft tokens at acceptance {a:.2f} give "
        f"{expected_tokens_per_verify(k, a):.2f} tokens per target step (Leviathan et al. 2023); TPOT includes "
        f"{k} draft steps per verify step."
    )


def with_draft(wl: Workload, draft: Draft | None) -> Workload:
    """``wl`` speculating with ``draft`` (None: plain decoding)."""
    if draft is None:
        return replace(wl, spec_draft=None)
    return replace(wl, spec_draft=draft.arch, spec_tokens=draft.tokens, spec_acceptance=draft.acceptance)
