"""Expert parallelism (EP) for serving a mixture-of-experts model: the step model of one rank of an EP replica.

The layout (DeepSeek's serving recipe, the one the engines run as "DP attention + EP"): an EP replica of ``ep``
GPUs holds E / ep routed experts of every MoE layer on each GPU, and runs attention and every dense weight (the
attention projections, dense layers, shared experts, router, embeddings, LM head) data-parallel beside it: each GPU
holds them whole and serves its own share of the sequences, with their KV cache whole (not split by heads).
SGLang ``--tp N --enable-dp-attention --ep-size N --moe-a2a-backend deepep`` (docs.sglang.io
advanced_features/expert_parallelism and dp_dpa_smg_guide; ``--enable-dp-attention`` alone runs the experts
tensor-parallel, all-gathering every rank's tokens, which at k = ep moves the all-to-all's bytes); vLLM
``--data-parallel-size N --enable-expert-parallel`` (docs.vllm.ai serving/data_parallel_deployment,
expert_parallel_deployment); TensorRT-LLM ``enable_attention_dp: true`` with ``moe_expert_parallel_size: N``
(nvidia.github.io/TensorRT-LLM features/parallel-strategy). EP with attention tensor-parallel over the same GPUs
(TensorRT-LLM ``--tp_size N --ep_size N`` without attention DP) reads and computes the same per GPU as TP on this
roofline and combines with TP's all-reduces: it is timed as TP.

One rank is simulated; the ranks run the same mix (requests spread evenly over them; the replica's rate is ep x the
rank's). Per step of ``t`` tokens on the rank (``token_terms``), with routed = ep x t (every rank's tokens reach the
experts):
  weights read   the dense part whole + E x (1 - (1 - k/E)^routed) / ep experts per MoE layer (the expected
                 distinct experts all ranks' tokens touch, ``expected_experts_touched``, of which a rank holds 1 / ep:
                 routing assumed uniform and balanced over the ranks, as EPLB's redundant experts aim for)
  expert FLOPs   2 x k x one expert's params x MoE layers x t (the rank's share of the routed tokens)
  expert GEMMs   each sees routed x k / touched tokens (``tokens_per_expert`` at routed)
  all-to-all     2 per MoE layer (dispatch, combine) of the rank's routed hidden states, t x k x hidden x activation
                 bytes, of which (ep - 1) / ep leave the GPU (``comm.all_to_all_time``); no all-reduce (tp 1)
  routing floor  ``moe_overhead_s_per_expert_layer`` x E / ep per MoE layer (the rank's own experts)
"""

from __future__ import annotations

from .comm import all_to_all_time
from .moe_weights import expert_weight_bytes, tokens_per_expert, weight_bytes_touched

EP_DEGREES = (2, 4, 8)  # within one machine (HGX boards hold 8 GPUs)


def degree(m, wl) -> int:
    """The expert-parallel degree a replica's steps are taken at: ``wl.ep`` for an MoE model (1 otherwise). Raises
    ValueError where the layout is not one an engine runs (attention DP needs tp = pp = 1; E / ep whole experts)."""
    if wl.ep <= 1 or not m.is_moe:
        return 1
    if wl.tp != 1 or wl.pp != 1:
        raise ValueError(f"ep: an expert-parallel replica runs attention data-parallel (tp 1, pp 1), not tp {wl.tp}")
    if m.num_experts % wl.ep:
        raise ValueError(f"ep: {wl.ep} does not divide the {m.num_experts} experts")
    return wl.ep


def all_to_all_bytes(m, tokens: float, act_bytes: float) -> float:
    """The routed hidden states one rank dispatches (or combines) per MoE layer: tokens x k x hidden x bytes (of
    which (ep - 1) / ep cross the link)."""
    return tokens * m.experts_per_token * m.hidden_size * act_bytes


def token_terms(cost, tokens: float) -> tuple:
    """``roofline.StepCost._token_terms`` for a rank of an EP replica (``cost.ep`` > 1; the module docstring): weights
    read, activations, communication seconds, expert FLOPs, expert weight bytes and tokens per expert GEMM."""
    m, ep, fmt = cost.m, cost.ep, cost.fmt
    routed = tokens * ep
    dense = weight_bytes_touched(m, fmt, tokens) - expert_weight_bytes(m, fmt, tokens)  # every routed expert out
    experts = expert_weight_bytes(m, fmt, routed) / ep
    acts = 2 * tokens * m.hidden_size * cost.act_bytes * m.num_layers
    comm = 2 * m.moe_layers * all_to_all_time(ep, all_to_all_bytes(m, tokens, cost.act_bytes), cost.gpu, cost.pa)
    return dense + experts, acts, comm, cost.expert_flops_per_token * tokens, experts, tokens_per_expert(m, routed)
