"""One replica's step model packed into arrays for the compiled step time (step_time.py): ``pack(cost,
decode_time_factor)`` turns a ``roofline.StepCost`` into ``coef`` (the roofline's per-replica constants, named by the
indices below), ``shapes`` (the GEMMs of a layer: n, k, the layers that run them) and the kernel tables the replica
reads (``meta``, ``grids``, ``ms``, ``logs``: each table's axes and its rows on the dense grid of those axes, NaN where
no shape was measured), and the replica's own ``memo`` of its GEMM times by token count (``MEMO_TOKENS``; empty
without kernel tables), or ``EMPTY`` where the compiled model does not cover the replica.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from ..common.jit import NUMBA
from . import kernels

_NAMES = (  # coef's entries, in order
    "per_pair kv_per_layer kv_full kv_swa kv_window kv_share num_layers swa_layers swa_tokens w_base untied vocab "
    "hidden emb_bytes is_moe experts topk one_expert moe_layers bpv shard act_bytes pp tp ar_kind ar_bw ar_lat "
    "ar_lat2 ar_sync ex_flops_per_token mfu_max mfu_max16 mfu_half dense lm_head bw peak attn_peak layers "
    "w_mbu_max mbu_half kv_mbu_max kv_mbu_half ex_f experts_fixed_s host_s decode_overhead prefill_overhead "
    "decode_factor kernels heads kv_heads lm_n lm_k ep a2a_bw a2a_lat a2a_sync spec_width per_pair_decode repl "
    "host_prefill_s abs_mfu is_mla step_factor"
)
_FIELDS = _NAMES.split()
(
    PER_PAIR,
    KV_PER_LAYER,
    KV_FULL,
    KV_SWA,
    KV_WINDOW,
    KV_SHARE,
    NUM_LAYERS,
    SWA_LAYERS,
    SWA_TOKENS,
    W_BASE,
    UNTIED,
    VOCAB,
    HIDDEN,
    EMB_BYTES,
    IS_MOE,
    EXPERTS,
    TOPK,
    ONE_EXPERT,
    MOE_LAYERS,
    BPV,
    SHARD,
    ACT_BYTES,
    PP,
    TP,
    AR_KIND,
    AR_BW,
    AR_LAT,
    AR_LAT2,
    AR_SYNC,
    EX_FLOPS_PER_TOKEN,
    MFU_MAX,
    MFU_MAX16,
    MFU_HALF,
    DENSE,
    LM_HEAD,
    BW,
    PEAK,
    ATTN_PEAK,
    LAYERS,
    W_MBU_MAX,
    MBU_HALF,
    KV_MBU_MAX,
    KV_MBU_HALF,
    EX_F,
    EXPERTS_FIXED_S,
    HOST_S,
    DECODE_OVERHEAD,
    PREFILL_OVERHEAD,
    DECODE_FACTOR,
    KERNELS,
    HEADS,
    KV_HEADS,
    LM_N,
    LM_K,
    EP,
    A2A_BW,
    A2A_LAT,
    A2A_SYNC,
    SPEC_WIDTH,
    PER_PAIR_DECODE,
    REPL,
    HOST_PREFILL_S,
    ABS_MFU,
    IS_MLA,
    STEP_FACTOR,
) = range(len(_FIELDS))
AR_NONE, AR_PCIE, AR_NVLINK = 0.0, 1.0, 2.0
T_GEMM, T_GEMM16, T_DECODE, T_PREFILL, T_ALL_REDUCE = range(5)  # the kernel tables a replica reads, by ``meta`` row
MAX_DIM, MAX_M = 65_536, 16_384  # kernel_steps'
# The memo of a replica's table look-ups (``memo``, step_time._gemms_s and _chunk_s): a step's dense GEMMs read only
# its token count, its LM head only its logits count and a prompt chunk's attention only the chunk's new tokens, so
# each count's time is looked up once (the look-ups were ~70% of a step's time) and kept here, up to these counts
# (a step's token budget and running sequences; past them, looked up as before). UNSET marks a count not yet looked
# up (a time is >= 0, or NaN where the tables have no figure).
MEMO_TOKENS, MEMO_LOGITS, UNSET = 8_192, 2_048, -1.0
MEMO_AT_LOGITS = MEMO_TOKENS + 1  # where the LM head's times start
MEMO_AT_CHUNKS = MEMO_AT_LOGITS + MEMO_LOGITS + 1  # where a chunk's attention times start (by its new tokens)


def new_memo() -> np.ndarray:
    """An empty memo: the dense GEMMs' times by token count 0 .. MEMO_TOKENS, the LM head's by logits count, a
    prompt chunk's attention by its new tokens."""
    return np.full(MEMO_AT_CHUNKS + MEMO_TOKENS + 1, UNSET)


def _empty_model():
    none = np.zeros((5, 6), np.int64)
    empty = np.empty(0)
    return (empty, np.zeros((0, 3), np.int64), none, np.zeros(0, np.int64), empty, empty, empty)


EMPTY = _empty_model()  # what a replica the compiled model does not cover packs to


@lru_cache(maxsize=256)
def _dense(table: str, key: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[int, ...]] | None:
    """One kernel table's rows for one coverage key on the dense grid of its axes, a two-axis table with a third
    axis of one point (0): (grids concatenated, ms, log ms (NaN where no shape was measured), each axis's length),
    or None where the table has no such key."""
    data = kernels._table(table)._data(key)
    if data is None:
        return None
    rows, logs, grids = data
    if len(grids) == 2:
        grids, rows, logs = [*grids, [0]], {(*p, 0): v for p, v in rows.items()}, {(*p, 0): v for p, v in logs.items()}
    lens = tuple(len(g) for g in grids)
    ms, lg = np.full(lens, np.nan), np.full(lens, np.nan)
    where = [{x: i for i, x in enumerate(g)} for g in grids]
    for p, v in rows.items():
        at = tuple(w[x] for w, x in zip(where, p, strict=True))
        ms[at], lg[at] = v, logs[p]
    return np.concatenate([np.array(g, np.int64) for g in grids]), ms.ravel(), lg.ravel(), lens


@lru_cache(maxsize=64)
def _tables(found: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``meta`` (per table: present, grid start, three axis lengths, value start), grids, ms and log ms of the
    tables named by ``found`` ((table, key) each, or None)."""
    meta, grids, ms, logs = np.zeros((len(found), 6), np.int64), [], [], []
    g_at = v_at = 0
    for t, name in enumerate(found):
        got = None if name is None else _dense(*name)
        if got is None:
            continue
        g, m, lg, lens = got
        meta[t] = 1, g_at, *lens, v_at
        grids.append(g)
        ms.append(m)
        logs.append(lg)
        g_at, v_at = g_at + len(g), v_at + len(m)
    cat = lambda xs, dt: np.concatenate(xs) if xs else np.zeros(0, dt)  # noqa: E731
    return meta, cat(grids, np.int64), cat(ms, np.float64), cat(logs, np.float64)


def pack(cost, decode_time_factor: float = 1.0):
    """The arrays ``step_s`` reads for one replica's step model (a ``roofline.StepCost``), or ``EMPTY`` where numba
    is missing or the compiled model does not cover the replica (the Python model answers)."""
    from ..memory.components import KEPT_BYTES_PER_PARAM, weight_split
    from ..model.arch import input_embedding_params
    from .roofline import _one_expert_params

    m, gpu, wl, pa, k = cost.m, cost.gpu, cost.wl, cost.pa, cost.kernels
    if not NUMBA or (k is not None and (m.is_moe or m.is_mla)):
        return EMPTY
    body, kept = weight_split(m, cost.fmt)
    emb_bytes = KEPT_BYTES_PER_PARAM if kept else cost.fmt.bytes_per_value
    w_base = body + kept
    if not m.tied_embeddings:
        w_base -= input_embedding_params(m) * emb_bytes
    kv = cost.kv_bytes
    c = dict.fromkeys(_FIELDS, 0.0)
    c.update(
        per_pair=cost.per_pair,
        per_pair_decode=cost.per_pair_decode,
        abs_mfu=cost.abs_mfu,
        is_mla=m.is_mla,
        repl=cost.repl_share,
        kv_per_layer=kv.per_layer,
        kv_full=kv.full,
        kv_swa=kv.swa,
        kv_window=kv.window or 0,
        kv_share=math.nan if kv.share is None else kv.share,
        num_layers=m.num_layers,
        swa_layers=m.sliding_window_layers,
        swa_tokens=m.sliding_window_tokens or 0,
        w_base=w_base,
        untied=not m.tied_embeddings,
        vocab=m.vocab_size,
        hidden=m.hidden_size,
        emb_bytes=emb_bytes,
        is_moe=m.is_moe,
        bpv=cost.fmt.bytes_per_value,
        shard=cost.shard,
        act_bytes=cost.act_bytes,
        pp=wl.pp,
        tp=wl.tp,
        ex_flops_per_token=cost.expert_flops_per_token,
        mfu_max=_mfu_max(pa, cost.math_used),
        mfu_max16=_mfu_max(pa, "bf16"),
        mfu_half=pa.mfu_half_tokens,
        dense=cost.dense_params,
        lm_head=cost.lm_head,
        bw=gpu.bandwidth_bytes_per_s,
        peak=cost.peak,
        attn_peak=cost.attn_peak,
        layers=cost.layers,
        w_mbu_max=cost.w_mbu_max,
        mbu_half=pa.mbu_half_bytes_per_layer,
        kv_mbu_max=pa.kv_mbu_max,
        kv_mbu_half=pa.kv_mbu_half_bytes_per_layer,
        ex_f=cost.ex_f,
        experts_fixed_s=cost.experts_fixed_s,
        host_s=cost.host_s,
        host_prefill_s=cost.prefill_host_s,
        decode_overhead=pa.decode_step_overhead_s,
        prefill_overhead=pa.prefill_overhead_s,
        decode_factor=decode_time_factor,
        # tokens a decoding sequence runs through the model per step: 1, or a speculative verify step's k + 1
        spec_width=1 if wl.spec_draft is None else wl.spec_tokens + 1,
        step_factor=wl.step_time_factor,
    )
    if m.is_moe:
        c.update(experts=m.num_experts, topk=m.experts_per_token, one_expert=_one_expert_params(m))
        c.update(moe_layers=m.moe_layers)
    if wl.tp > 1:  # roofline.allreduce_time's link, as it works it out
        kind, link = gpu.peer_link(wl.tp)
        if kind == "pcie":
            c.update(ar_kind=AR_PCIE, ar_bw=(link or pa.pcie_link_gb_s * 1e9) * pa.pcie_efficiency)
            c.update(ar_lat=pa.allreduce_latency_pcie_s)
        else:
            c.update(ar_kind=AR_NVLINK, ar_bw=link * pa.link_efficiency, ar_lat=pa.allreduce_latency_s)
            c.update(ar_lat2=pa.allreduce_two_shot_latency_s, ar_sync=pa.allreduce_sync_s)
    if cost.ep > 1:  # an EP rank (expert_parallel.token_terms): comm.all_to_all_time's link, as it works it out
        kind, link = gpu.peer_link(cost.ep)
        c.update(ep=cost.ep)
        if kind == "pcie":  # no fixed wait (a2a_sync 0: adding 0.0 leaves the float as it is)
            c.update(a2a_bw=(link or pa.pcie_link_gb_s * 1e9) * pa.pcie_efficiency, a2a_lat=pa.allreduce_latency_pcie_s)
        else:
            c.update(a2a_bw=link * pa.link_efficiency, a2a_lat=pa.allreduce_latency_s, a2a_sync=pa.allreduce_sync_s)
    shapes = np.zeros((0, 3), np.int64)
    found: list = [None] * 5
    if k is not None:
        c.update(kernels=1.0, heads=k.heads, kv_heads=k.kv_heads, lm_n=k.lm_head[0], lm_k=k.lm_head[1])
        shapes = np.array(k.shapes, np.int64).reshape(-1, 3)
        found[T_GEMM] = ("gemm", (k.gpu, k.engine, k.dtype))
        found[T_GEMM16] = ("gemm", (k.gpu, k.engine, "bf16"))
        found[T_DECODE] = ("attention_decode", (k.gpu, k.engine, k.kv, k.heads, k.kv_heads))
        found[T_PREFILL] = ("attention_prefill", (k.gpu, k.engine, k.kv, k.heads, k.kv_heads))
        found[T_ALL_REDUCE] = ("all_reduce", (k.gpu, "nccl"))
    coef = np.array([float(c[name]) for name in _FIELDS])
    return (coef, shapes, *_tables(tuple(found)), new_memo() if k is not None else np.empty(0))


def with_factor(model, decode_time_factor: float):
    """``model`` with a calibrated deployment's decode-step factor (what ``steps.cell_of`` multiplies decode steps
    by)."""
    if len(model[0]) == 0 or decode_time_factor == model[0][DECODE_FACTOR]:
        return model
    coef = model[0].copy()
    coef[DECODE_FACTOR] = decode_time_factor
    return (coef, *model[1:])


def _mfu_max(pa, math_used: str) -> float:
    from .efficiency import _mfu_max

    return _mfu_max(pa, math_used)
