"""Speculative decoding's drafts as models: the user's draft model or the model's own multi-token-prediction (MTP)
module, what a replica holds for one (its weights and KV cache: memory/inference.py) and the tokens a verify step
yields. The step model's use of them: perf/speculative.py.

Tokens per verify step: each drafted token is accepted with probability ``a`` independently, and the first
rejection ends the run, so the expected tokens a verify step yields are 1 + a + a^2 + ... + a^k
= (1 - a^(k+1)) / (1 - a), and k + 1 at a = 1 (Leviathan, Kalman and Matias 2023, "Fast Inference from Transformers
via Speculative Decoding", ICML, eq. 1).

MTP: DeepSeek-V3 and R1 ship a multi-token-prediction module with the checkpoint (config.json
``num_nextn_predict_layers``: 1), one transformer layer of the main model's shape that shares its embedding and
output head. Run as a one-token draft, "the acceptance rate of the second token prediction ranges between 85% and
90%" (DeepSeek-V3 Technical Report, arXiv:2412.19437, section 5.4.3): ``MTP_ACCEPTANCE`` is the low end. The
module's own projection (2h x h) and norms, ~0.1B parameters next to its layer's ~12B, are left out of the draft.
"""

from __future__ import annotations

from dataclasses import dataclass

from .arch import ModelArch, embedding_params, model_from_param_count, params_total

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

    @property
    def weight_params(self) -> int:
        """Parameters the draft adds to a replica's weights: a draft model's all; the MTP module's without the
        embedding and output head it shares with the model (``embedding_params``)."""
        shared = embedding_params(self.arch) if self.kind == "MTP" else 0
        return params_total(self.arch) - shared


def expected_tokens_per_verify(k: int, acceptance: float) -> float:
    """Expected tokens one verify step of ``k`` drafted tokens yields at per-token ``acceptance`` a:
    (1 - a^(k+1)) / (1 - a), and k + 1 at a = 1 (Leviathan et al. 2023, eq. 1)."""
    if k < 1 or not 0 <= acceptance <= 1:
        raise ValueError("speculative decoding: k must be >= 1 and acceptance within 0 .. 1")
    return k + 1 if acceptance >= 1 else (1 - acceptance ** (k + 1)) / (1 - acceptance)


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


def user_draft(a) -> Draft | None:
    """The draft model the user named (``a.spec_draft_params`` of the scenario's RuntimeAssumptions, a Llama-style
    shape of that size), or None."""
    if not a.spec_draft_params:
        return None
    arch = model_from_param_count(max(a.spec_draft_params, SMALLEST_DRAFT_PARAMS))
    return Draft(arch, a.spec_tokens, a.spec_acceptance, "draft model", "your acceptance rate")


def draft_for(m: ModelArch, a) -> Draft | None:
    """The draft a serving question can speculate with: the user's draft model where they named one, else the
    model's MTP module where it ships one, else None."""
    return user_draft(a) or mtp_draft(m)


def replica_draft(m: ModelArch | None, a) -> Draft | None:
    """The draft a replica of the scenario runs (its steps, weights and KV cache): the user's draft model where they
    named one, else the model's MTP module where it ships one and ``a.spec_mtp`` is "on" (the recommender sets it
    where it weighs MTP: plan/speculation.py), else None (plain decoding)."""
    mine = user_draft(a)
    if mine is not None or m is None or getattr(a, "spec_mtp", "weigh") != "on":
        return mine
    return mtp_draft(m)
