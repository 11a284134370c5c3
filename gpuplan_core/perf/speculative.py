"""Speculative decoding in the step model: a draft proposes ``k`` tokens, the target model checks them in one verify
step of ``k + 1`` tokens per sequence, keeps the accepted run of drafted tokens and adds one token of its own.

Tokens per verify step: each drafted token is accepted with probability ``a`` independently, and the first
rejection ends the run, so the expected tokens a verify step yields are 1 + a + a^2 + ... + a^k
= (1 - a^(k+1)) / (1 - a), and k + 1 at a = 1 (Leviathan, Kalman and Matias 2023, "Fast Inference from Transformers
via Speculative Decoding", ICML, eq. 1). Time per output token: (k draft steps + one verify step) / that count
(``spec_tpot_s``; the static view's, predict.py).

MTP: DeepSeek-V3 and R1 ship a multi-token-prediction module with the checkpoint (config.json
``num_nextn_predict_layers``: 1), one transformer layer of the main model's shape that shares its embedding and
output head. Run as a one-token draft, "the acceptance rate of the second token prediction ranges between 85% and
90%" (DeepSeek-V3 Technical Report, arXiv:2412.19437, section 5.4.3): ``MTP_ACCEPTANCE`` is the low end. The
module's own projection (2h x h) and norms, ~0.1B parameters next to its layer's ~12B, are left out of the draft.

One engine, static or under load: a speculating replica's decode step (steps.StepModel.step_s, step_time.step_s)
is k steps of the draft over the decoding sequences and one verify step of the target, k + 1 tokens per sequence,
and writes ``expected_tokens_per_verify`` tokens per sequence on average. The static view (predict.py) divides its
mean step by that count (``spec_tpot_s``: (k draft steps + one verify step) / the count); the serving step loop
(step_loop.py) runs the same steps under load, each sequence writing that count a step (its KV cache growing by as
much, with k + 1 slots held for the step's verify), so first-token time, time per token and capacity all come from
it. A draft's own pass over the prompts is not timed (TTFT is the target's prefill), nor its weights and KV cache
in the memory budget. The recommender weighs speculation where the user names a draft (plan/speculation.py).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..model.arch import ModelArch, model_from_param_count
from ..scenario.deployment import RuntimeAssumptions
from .roofline import Workload

MTP_ACCEPTANCE = 0.85  # DeepSeek-V3 Technical Report (arXiv:2412.19437) section 5.4.3: 85-90% for the second token
MTP_SOURCE = "DeepSeek-V3 Technical Report (arXiv:2412.19437), section 5.4.3: second-token acceptance 85-90%"
SMALLEST_DRAFT_PARAMS = 500_000_000  # model_from_param_count's least: a smaller draft is timed as 0.5B


@dataclass(frozen=True)
class Draft:
    """A speculative-decoding draft: its architecture, the tokens it proposes per verify step, the share of them
    the target accepts, what it is ("MTP": the model's own module; "draft model": the user's) and where the
    acceptance comes from."""

    arch: ModelArch
    tokens: int  # k: drafted per verify step
    acceptance: float  # a: per drafted token, 0 .. 1
    kind: str
    source: str

    @property
    def tokens_per_verify(self) -> float:
        """Expected output tokens one verify step yields (``expected_tokens_per_verify``)."""
        return expected_tokens_per_verify(self.tokens, self.acceptance)


def expected_tokens_per_verify(k: int, acceptance: float) -> float:
    """Expected tokens one verify step of ``k`` drafted tokens yields at per-token ``acceptance`` a:
    (1 - a^(k+1)) / (1 - a), and k + 1 at a = 1 (Leviathan et al. 2023, eq. 1)."""
    if k < 1 or not 0 <= acceptance <= 1:
        raise ValueError("speculative decoding: k must be >= 1 and acceptance within 0 .. 1")
    return k + 1 if acceptance >= 1 else (1 - acceptance ** (k + 1)) / (1 - acceptance)


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


def mtp_draft(m: ModelArch) -> Draft | None:
    """The model's own multi-token-prediction module as a draft (one token per MTP layer, at the published
    acceptance), or None where the model ships none. Its layer is one of the model's MoE layers (DeepSeek-V3: the
    MTP layer is MoE), with the model's embedding and output head."""
    if not m.mtp_layers:
        return None
    arch = ModelArch(  # built anew, not model_copy: that would carry the model's cached parameter counts
        **{
            **m.model_dump(),
            "name": f"{m.name} MTP module",
            "source": f"{m.name}'s multi-token-prediction module ({m.mtp_layers} layer(s), num_nextn_predict_layers)",
            "num_layers": m.mtp_layers,
            "first_dense_layers": 0,
            "sliding_window_layers": min(m.sliding_window_layers, m.mtp_layers),
            "mtp_layers": 0,
            "declared_params": None,
        }
    )
    return Draft(arch, m.mtp_layers, MTP_ACCEPTANCE, "MTP", MTP_SOURCE)


def user_draft(a: RuntimeAssumptions) -> Draft | None:
    """The draft model the user named (``spec_draft_params``, a Llama-style shape of that size), or None."""
    if not a.spec_draft_params:
        return None
    arch = model_from_param_count(max(a.spec_draft_params, SMALLEST_DRAFT_PARAMS))
    return Draft(arch, a.spec_tokens, a.spec_acceptance, "draft model", "your acceptance rate")


def draft_for(m: ModelArch, a: RuntimeAssumptions) -> Draft | None:
    """The draft a serving question can speculate with: the user's draft model where they named one, else the
    model's MTP module where it ships one, else None."""
    return user_draft(a) or mtp_draft(m)


def with_draft(wl: Workload, draft: Draft | None) -> Workload:
    """``wl`` speculating with ``draft`` (None: plain decoding)."""
    if draft is None:
        return replace(wl, spec_draft=None)
    return replace(wl, spec_draft=draft.arch, spec_tokens=draft.tokens, spec_acceptance=draft.acceptance)
