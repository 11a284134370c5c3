"""The memory engine: every byte of a job's budget, per GPU, with its scope named.

Scopes (each budget says which one it is):
  "weights only"   the parameters alone, in the weights format
  "model states"   training: weights + master weights + gradients + optimizer states
  "whole runtime"  everything the process holds: the above + KV cache or activations + workspace,
                   CUDA context and communication buffers

Formulas (one place; the Methodology page shows the same):
  weights        = params x bytes_per_weight / (tp x pp)            [/ dp with ZeRO-3]
  KV cache       = 2 x layers x kv_heads x head_dim x kv_bytes x tokens x sequences
                   (MLA: layers x (kv_lora_rank + qk_rope_head_dim) x kv_bytes x tokens x sequences;
                   sliding-window layers hold min(tokens, window); TP splits KV heads, never
                   below one per rank; sequences are rounded up to whole paged blocks)
  training       ZeRO paper accounting, 16 B/param: bf16 weights 2 + bf16 grads 2 + fp32 master 4
                   + Adam momentum 4 + variance 4. Hugging Face accounting, 18 B/param: weights 6
                   (bf16 2 + fp32 master 4) + fp32 grads 4 + Adam 8. ZeRO-1 shards master +
                   optimizer over dp, ZeRO-2 also gradients, ZeRO-3 also weights.
  activations    Korthikanti et al. 2022 per layer, generalised to GQA and gated MLPs:
                   s*b*(attention 3h + 4*a*d + 4*kv*d + MLP 3h + (6 or 4)*I + norms 4h) bytes at 2-byte
                   activations, + 5*a*s^2*b for the attention scores unless FlashAttention;
                   selective recompute drops the s^2 term, full recompute keeps 2*s*b*h per layer;
                   divided by tp (sequence parallel); pipeline stages do not reduce it (1F1B);
                   + fp32 logits s*b*V*4 / tp.
"""

from __future__ import annotations

from ..model.arch import ModelArch, check_tp
from .components import MemoryBudget, MemoryRequest
from .inference import inference_budget
from .training import training_budget


def memory_budget(m: ModelArch, req: MemoryRequest) -> MemoryBudget:
    """The whole per-GPU budget of one configuration (req.parallelism.gpus GPUs, tp x pp x dp)."""
    check_tp(m, req.parallelism.tp)
    if req.parallelism.pp > m.num_layers:
        raise ValueError(f"pp: {req.parallelism.pp} pipeline stages exceed the model's {m.num_layers} layers")
    return _budget(m, req, req.batch, req.context_tokens)


def _budget(m: ModelArch, req: MemoryRequest, batch: int, context: int) -> MemoryBudget:
    """memory_budget with batch and context as arguments (the inverse searches call this)."""
    if req.job.mode == "inference":
        return inference_budget(m, req, batch, context)
    return training_budget(m, req, batch, context)
