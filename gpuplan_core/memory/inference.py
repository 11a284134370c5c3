"""The inference budget: weights, KV cache at the context, activations of the engine's prefill chunk, logits,
workspace, CUDA graphs, context and communication buffers (each engine's terms: hardware/engines.py). A replica
that speculates (model/draft.py ``replica_draft``) also holds its draft: ``DRAFT_WEIGHTS`` = the draft's parameters
(model/draft.py ``Draft.weight_params``: an MTP module's without the embedding and head it shares) x bytes per
weight / (tp x pp), and ``DRAFT_KV`` = the draft's own KV cache at the same context and sequences (its layers, KV
heads and head size, in the KV format): every running sequence keeps a KV cache in both models."""

from __future__ import annotations

import re

from ..hardware.engines import ENGINES, EngineProfile, cuda_graphs
from ..model.arch import ModelArch, _ceil_div, kv_cache_bytes, routed_expert_params
from ..model.draft import replica_draft
from ..model.formats import get_format
from .components import KEPT_COMPONENT, Assumptions, MemoryBudget, MemoryRequest, overheads, weight_split

VLLM_V1_FROM = (0, 8)  # the V1 engine is vLLM's default from 0.8.0
VLLM_V0_MIN_PROFILE_TOKENS = 2048  # V0 SchedulerConfig: max_num_batched_tokens = max(max_model_len, 2048)
# Fitted: fp32 logits-sized buffers the V1 sampler's dummy run holds at its peak (logits, sorted values, int64
# indices = 2, scatter, softmax, exponential draw, logprobs), in units of max_num_seqs x vocab x 4 bytes. Fitted on
# 1 training row (vllm019-h100-l31-8b-kvpool, llm-d-planner report, vLLM 0.19: activation 1.89 GiB at 8,192
# tokens and 256 sequences): (1.89 GiB - 8,192 x 59,392 x 2 B) / (256 x 128,256 x 4 B) = 7.95 -> 8. Held-out
# error of the start-up capacity: memory/engine_kv.py, tests/core/memory/test_engine_kv.py.
VLLM_V1_SAMPLER_LOGIT_COPIES = 8
DRAFT_WEIGHTS = "draft weights"  # a speculating replica's draft model or MTP module (module docstring)
DRAFT_KV = "draft KV cache"
KV_COMPONENTS = ("KV cache", DRAFT_KV)  # what grows with every running sequence's tokens


def parse_version(text: str | None) -> tuple[int, int] | None:
    """(major, minor) of an engine version written anywhere in ``text`` ('vLLM 0.19.0' -> (0, 19)); None if none."""
    hit = re.search(r"(\d+)\.(\d+)", str(text)) if text else None
    return (int(hit.group(1)), int(hit.group(2))) if hit else None


def vllm_is_v0(version: tuple[int, int] | None) -> bool:
    return version is not None and version < VLLM_V1_FROM


def inference_activation_bytes(
    m: ModelArch,
    asm: Assumptions,
    act_bytes: float,
    tp: int,
    engine: EngineProfile | None = None,
    step_tokens: int | None = None,
    *,
    logits_sequences: int | None = None,
    context_tokens: int | None = None,
) -> float:
    """Peak activation workspace of one forward pass (an estimate): the widest intermediate (the MLP's) for every
    token of the largest step, plus fp32 logits. The largest step is the engine's chunked-prefill budget, or the
    whole prompt of every sequence for an engine without chunking (``step_tokens``). vLLM V0 without chunked prefill
    profiles max(max_model_len, 2,048) tokens (``context_tokens``); the V1 sampler's dummy run holds
    VLLM_V1_SAMPLER_LOGIT_COPIES logits-sized buffers."""
    if asm.activation_workspace_bytes is not None:
        return asm.activation_workspace_bytes
    inter = m.expert_intermediate_size * m.experts_per_token if m.is_moe else m.intermediate_size
    width = ((2 if m.mlp_gated else 1) * inter + inter) / tp + 4 * m.hidden_size
    copies = 1
    if engine is None or engine.name == "vllm":
        tokens, seqs = asm.max_batched_tokens, asm.max_sampled_sequences
        if vllm_is_v0(parse_version(asm.stated_engine_version)):
            if context_tokens and not asm.chunked_prefill:
                tokens = max(context_tokens, VLLM_V0_MIN_PROFILE_TOKENS)
        elif engine is not None:
            copies, seqs = VLLM_V1_SAMPLER_LOGIT_COPIES, min(seqs, tokens)
    else:
        tokens = engine.prefill_chunk_tokens or step_tokens or asm.max_batched_tokens
        seqs = engine.logits_sequences or logits_sequences or 1
    logits = copies * seqs * m.vocab_size * 4 / tp
    return tokens * width * act_bytes + logits


def serving_ep(m: ModelArch, req: MemoryRequest) -> int:
    """The expert-parallel degree of a serving budget: ``parallelism.ep`` for an MoE model at tp = pp = 1 (its
    attention data-parallel over the same GPUs), else 1."""
    par = req.parallelism
    if not m.is_moe or par.ep_or_one <= 1:
        return 1
    if par.tp != 1 or par.pp != 1 or m.num_experts % par.ep:
        raise ValueError(f"ep: {par.ep} runs attention data-parallel (tp 1, pp 1) over whole experts")
    return par.ep


def inference_budget(m: ModelArch, req: MemoryRequest, batch: int, context: int) -> MemoryBudget:
    wf, kvf, af = (
        get_format(req.formats.weights_format),
        get_format(req.formats.kv_format),
        get_format(req.activation_format),
    )
    asm = req.assumptions
    shard = req.parallelism.tp * req.parallelism.pp
    body, kept = weight_split(m, wf)
    ep = serving_ep(m, req)
    if ep > 1:  # each GPU holds E / ep of every MoE layer's routed experts, the rest whole (perf/expert_parallel.py)
        body -= routed_expert_params(m) * wf.bytes_per_value * (1 - 1 / ep)
    w = (body + kept) / shard
    weight_parts = {"weights": body / shard}
    if kept:
        weight_parts[KEPT_COMPONENT] = kept / shard
    eng = ENGINES[req.runtime.engine]
    block = asm.kv_block_tokens if eng.name == "vllm" else eng.kv_block_tokens
    ctx = _ceil_div(context, block) * block
    kv = kv_cache_bytes(m, kvf.bytes_per_value, ctx, batch, tp=req.parallelism.tp, pp=req.parallelism.pp)
    prompt = min(req.prefill_tokens or context, context)
    act = inference_activation_bytes(
        m,
        asm,
        af.bytes_per_value,
        req.parallelism.tp,
        eng,
        batch * prompt,
        logits_sequences=batch,
        context_tokens=context,
    )
    comps = {**weight_parts, "KV cache": kv, **draft_components(m, req, batch, ctx)}
    comps |= {
        "activation workspace": act,
        **({"CUDA graphs": asm.cuda_graph_bytes} if cuda_graphs(eng.name, req.runtime.engine_version) else {}),
        **overheads(req),
    }
    if ep > 1:  # the all-to-all's buffers, as tensor parallel's NCCL buffers
        comps["communication buffers"] = asm.comm_buffer_bytes
    notes = []
    if ep > 1:
        notes.append(
            f"Expert parallel {ep}: each GPU holds {m.num_experts // ep} of the {m.num_experts} routed experts per "
            "MoE layer and the attention and dense weights whole (attention data-parallel: each GPU's KV cache holds "
            "its own sequences)."
        )
    draft = replica_draft(m, req.runtime)
    if draft is not None:
        notes.append(
            f"Speculative decoding: the replica holds its {draft.kind} ({draft.weight_params / 1e9:.2f}B parameters) "
            "and, for every running sequence, the draft's KV cache beside the model's."
        )
    if wf.lower_bound:
        notes.append("Ideal packed 4-bit is a lower bound: real 4-bit formats store scales on top.")
    if m.approximate:
        notes.append(
            "The architecture is derived from a bare parameter count: KV cache and activations are approximate."
        )
    if m.is_mla and req.parallelism.tp > 1:
        notes.append("MLA latent KV is not split by heads: every tensor-parallel rank holds all of it.")
    if not m.is_mla and req.parallelism.tp > m.num_kv_heads:
        notes.append(
            f"tp {req.parallelism.tp} exceeds the {m.num_kv_heads} KV heads: KV heads are replicated, one per rank."
        )
    budgets = {"weights only": w, "whole runtime": sum(comps.values())}
    return MemoryBudget(components=comps, budgets=budgets, gpus=req.parallelism.gpus, notes=notes)


def draft_components(m: ModelArch, req: MemoryRequest, batch: int, context: int) -> dict[str, float]:
    """A speculating replica's draft on one GPU (module docstring): its weights, params x bytes per weight /
    (tp x pp), and its KV cache of ``batch`` sequences at ``context`` tokens (already rounded to whole blocks); {}
    without a draft."""
    draft = replica_draft(m, req.runtime)
    if draft is None:
        return {}
    par = req.parallelism
    wf, kvf = get_format(req.formats.weights_format), get_format(req.formats.kv_format)
    weights = draft.weight_params * wf.bytes_per_value / (par.tp * par.pp)
    kv = kv_cache_bytes(draft.arch, kvf.bytes_per_value, context, batch, tp=par.tp, pp=par.pp)
    return {DRAFT_WEIGHTS: weights, DRAFT_KV: kv}
