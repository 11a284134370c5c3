"""One engine step's time on one replica, compiled (common/jit.py): ``roofline.StepCost.seconds`` and the kernel
tables' look-ups (kernel_steps.py, kernels.py) as one nopython function, so the compiled step loop (step_loop.py)
times a step it has not seen without a call back into Python.

``pack(cost, decode_time_factor)`` turns one replica's step model into arrays once: ``coef`` (the roofline's
per-replica constants, named by the ``_C`` indices below), ``shapes`` (the GEMMs of a layer: n, k, the layers that
run them) and the kernel tables the replica reads (``meta``, ``grids``, ``ms``, ``logs``: each table's axes and its
rows on the dense grid of those axes, NaN where no shape was measured). ``step_s(model, decodes, ctx, spec,
count)`` is ``StepModel.step_s`` and ``cell(model, n, j)`` is ``StepTimes.cell``: the same operations in the same
order on the same float64 values, so the times are equal to the last bit (tests/core/perf/test_step_time.py holds
them to the Python model on thousands of random steps). A replica the compiled model does not cover (MoE or MLA
layers timed from the kernel tables, kernel_steps.MEASURED_MOE) packs to an empty ``coef`` and the loop asks the
Python model, as before.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from ..common.jit import NUMBA, njit
from . import kernels

_NAMES = (  # coef's entries, in order
    "per_pair kv_per_layer kv_full kv_swa kv_window kv_share num_layers swa_layers swa_tokens w_base untied vocab "
    "hidden emb_bytes is_moe experts topk one_expert moe_layers bpv shard act_bytes pp tp ar_kind ar_bw ar_lat "
    "ar_lat2 ar_sync ex_flops_per_token mfu_max mfu_max16 mfu_half dense lm_head bw peak attn_peak layers "
    "w_mbu_max mbu_half kv_mbu_max kv_mbu_half ex_f experts_fixed_s host_s decode_overhead prefill_overhead "
    "decode_factor kernels heads kv_heads lm_n lm_k"
)
_FIELDS = _NAMES.split()
(PER_PAIR, KV_PER_LAYER, KV_FULL, KV_SWA, KV_WINDOW, KV_SHARE, NUM_LAYERS, SWA_LAYERS, SWA_TOKENS, W_BASE, UNTIED,
 VOCAB, HIDDEN, EMB_BYTES, IS_MOE, EXPERTS, TOPK, ONE_EXPERT, MOE_LAYERS, BPV, SHARD, ACT_BYTES, PP, TP, AR_KIND,
 AR_BW, AR_LAT, AR_LAT2, AR_SYNC, EX_FLOPS_PER_TOKEN, MFU_MAX, MFU_MAX16, MFU_HALF, DENSE, LM_HEAD, BW, PEAK,
 ATTN_PEAK, LAYERS, W_MBU_MAX, MBU_HALF, KV_MBU_MAX, KV_MBU_HALF, EX_F, EXPERTS_FIXED_S, HOST_S, DECODE_OVERHEAD,
 PREFILL_OVERHEAD, DECODE_FACTOR, KERNELS, HEADS, KV_HEADS, LM_N, LM_K) = range(len(_FIELDS))  # fmt: skip
AR_NONE, AR_PCIE, AR_NVLINK = 0.0, 1.0, 2.0
T_GEMM, T_GEMM16, T_DECODE, T_PREFILL, T_ALL_REDUCE = range(5)  # the kernel tables a replica reads, by ``meta`` row
_MAX_DIM, _MAX_M = 65_536, 16_384  # kernel_steps'


def _empty_model():
    none = np.zeros((5, 6), np.int64)
    return (np.empty(0), np.zeros((0, 3), np.int64), none, np.zeros(0, np.int64), np.empty(0), np.empty(0))


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
        per_pair=cost.per_pair, kv_per_layer=kv.per_layer, kv_full=kv.full, kv_swa=kv.swa, kv_window=kv.window or 0,
        kv_share=math.nan if kv.share is None else kv.share, num_layers=m.num_layers,
        swa_layers=m.sliding_window_layers, swa_tokens=m.sliding_window_tokens or 0, w_base=w_base,
        untied=not m.tied_embeddings, vocab=m.vocab_size, hidden=m.hidden_size, emb_bytes=emb_bytes,
        is_moe=m.is_moe, bpv=cost.fmt.bytes_per_value, shard=cost.shard, act_bytes=cost.act_bytes, pp=wl.pp,
        tp=wl.tp, ex_flops_per_token=cost.expert_flops_per_token, mfu_max=_mfu_max(pa, cost.math_used),
        mfu_max16=_mfu_max(pa, "bf16"), mfu_half=pa.mfu_half_tokens, dense=cost.dense_params, lm_head=cost.lm_head,
        bw=gpu.bandwidth_bytes_per_s, peak=cost.peak, attn_peak=cost.attn_peak, layers=cost.layers,
        w_mbu_max=cost.w_mbu_max, mbu_half=pa.mbu_half_bytes_per_layer, kv_mbu_max=pa.kv_mbu_max,
        kv_mbu_half=pa.kv_mbu_half_bytes_per_layer, ex_f=cost.ex_f, experts_fixed_s=cost.experts_fixed_s,
        host_s=cost.host_s, decode_overhead=pa.decode_step_overhead_s, prefill_overhead=pa.prefill_overhead_s,
        decode_factor=decode_time_factor,
    )  # fmt: skip
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
    return (coef, shapes, *_tables(tuple(found)))


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


@njit
def _bisect_left(a, lo, hi, x):
    """The first index in a[lo:hi] whose value is >= x (bisect.bisect_left)."""
    while lo < hi:
        mid = (lo + hi) // 2
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit
def _axis(grids, start, n, x):
    """Where ``x`` falls on one axis's grid (grids[start:start + n]): (its index or -1 when it is between points,
    the indices below and above, the upper point's weight (kernels._Table.look_up's, 0 on a point), inside)."""
    i = _bisect_left(grids, start, start + n, x)
    if i < start + n and grids[i] == x:
        return i - start, i - start, i - start, 0.0, True
    if i == start or i == start + n:
        return -1, 0, 0, 0.0, False
    lo, up = grids[i - 1], grids[i]
    return -1, i - 1 - start, i - start, (math.log(x) - math.log(lo)) / (math.log(up) - math.log(lo)), True


@njit
def look_up(model, t, x0, x1, x2):
    """kernels._Table.look_up of table ``t`` at the point (x0, x1, x2) in seconds (x2 = 0 on a two-axis table), the
    corners weighted in its order; NaN where it has no figure."""
    meta, grids, ms, logs = model[2], model[3], model[4], model[5]
    if meta[t, 0] == 0:
        return np.nan
    g0, n0, n1, n2, v0 = meta[t, 1], meta[t, 2], meta[t, 3], meta[t, 4], meta[t, 5]
    e0, lo0, up0, w0, in0 = _axis(grids, g0, n0, x0)
    e1, lo1, up1, w1, in1 = _axis(grids, g0 + n0, n1, x1)
    e2, lo2, up2, w2, in2 = _axis(grids, g0 + n0 + n1, n2, x2)
    if e0 >= 0 and e1 >= 0 and e2 >= 0:  # a row of the table
        got = ms[v0 + (e0 * n1 + e1) * n2 + e2]
        if not math.isnan(got):
            return got / 1e3
    if not (in0 and in1 and in2):
        return np.nan
    log_ms = 0.0
    for mask in range(8):  # the corners around the point, each weighted by its share on every axis
        w = 1.0
        if mask & 1:
            i0, w = up0, w * w0
        else:
            i0, w = lo0, w * (1.0 - w0)
        if mask >> 1 & 1:
            i1, w = up1, w * w1
        else:
            i1, w = lo1, w * (1.0 - w1)
        if mask >> 2 & 1:
            i2, w = up2, w * w2
        else:
            i2, w = lo2, w * (1.0 - w2)
        if w == 0.0:
            continue
        lv = logs[v0 + (i0 * n1 + i1) * n2 + i2]
        if math.isnan(lv):
            return np.nan
        log_ms += w * lv
    return math.exp(log_ms) / 1e3


@njit
def _gemm_s(model, t, m, n, k):
    """kernel_steps._gemm_s: one GEMM, a dimension past the tables split into equal measured pieces."""
    pm, pn, pk = math.ceil(m / _MAX_M), math.ceil(n / _MAX_DIM), math.ceil(k / _MAX_DIM)
    got = look_up(model, t, math.ceil(m / pm), math.ceil(n / pn), math.ceil(k / pk))
    return got * pm * pn * pk


@njit
def _kv_bytes(c, context_tokens, sequences):
    """model.arch.KVCacheBytes."""
    if context_tokens <= 0 or sequences <= 0:
        return 0.0
    tokens_swa = min(context_tokens, c[KV_WINDOW]) if c[KV_SWA] else 0.0
    total = c[KV_PER_LAYER] * (c[KV_FULL] * context_tokens + c[KV_SWA] * tokens_swa) * sequences
    if not math.isnan(c[KV_SHARE]):
        total *= c[KV_SHARE]
    return total


@njit
def _attended(c, cached, new):
    """roofline._attended."""
    causal = new * cached + new * (new + 1) / 2
    total = (c[NUM_LAYERS] - c[SWA_LAYERS]) * causal
    if c[SWA_LAYERS]:
        w = np.int64(c[SWA_TOKENS])
        k = min(max(w - cached, 0), new)
        total += c[SWA_LAYERS] * (k * cached + k * (k + 1) // 2 + (new - k) * w)
    return total


@njit
def _touched(c, tokens):
    """roofline.expected_experts_touched (a float power, as Python's)."""
    e = c[EXPERTS]
    return e * (1 - (1 - c[TOPK] / e) ** max(tokens, 0.0))


@njit
def _allreduce_s(c, message_bytes):
    """roofline.allreduce_time over the replica's tensor-parallel GPUs."""
    n, kind, bw = c[TP], c[AR_KIND], c[AR_BW]
    if kind == AR_NONE:
        return 0.0
    ring_bytes = 2 * (n - 1) / n * message_bytes
    if kind == AR_PCIE:
        return c[AR_LAT] + ring_bytes / bw
    one_shot = c[AR_LAT] + (n - 1) * message_bytes / bw
    two_shot = c[AR_LAT2] + ring_bytes / bw
    return min(one_shot, two_shot) + c[AR_SYNC]


@njit
def _to(p0, p1, seconds):
    """kernel_steps._to."""
    top = max(p0, p1)
    return (p0 * seconds / top, p1 * seconds / top) if top > 0 else (seconds, 0.0)


@njit
def _part(model, seqs, cached, new):
    """One part's attention seconds from the tables (kernel_steps.MeasuredSteps._attention), NaN: not measured."""
    batch = max(1, round(seqs))
    if new == 1:
        t = look_up(model, T_DECODE, batch, max(1, cached), 0)
    else:
        t = look_up(model, T_PREFILL, batch, new, 0)
        if not math.isnan(t) and cached:
            t *= (new * cached + new * (new + 1) / 2) / (new * (new + 1) / 2)
    return t * seqs / batch


@njit
def step_s(model, decodes, ctx, spec, count):
    """StepModel.step_s: a step of ``decodes`` sequences each adding a token after ``ctx`` and the prompt chunks
    ``spec[:3 count]`` ((cached, new, logits) each), in seconds."""
    c = model[0]
    tokens = lm_tokens = attn = kv = 0.0
    if decodes > 0:  # roofline.StepCost._parts_sums: the decodes' part, then each chunk's
        tokens += decodes * 1
        lm_tokens += decodes
        attn += c[PER_PAIR] * _attended(c, ctx, 1) * decodes
        kv += _kv_bytes(c, ctx, decodes) + _kv_bytes(c, 1, decodes)
    for j in range(count):
        cached, new = spec[3 * j], spec[3 * j + 1]
        tokens += 1.0 * new
        lm_tokens += spec[3 * j + 2]
        attn += c[PER_PAIR] * _attended(c, cached, new) * 1.0
        kv += _kv_bytes(c, cached, 1.0) + _kv_bytes(c, new, 1.0)
    # roofline.StepCost._token_terms
    w_bytes = c[W_BASE]
    if c[UNTIED]:
        w_bytes += min(tokens, c[VOCAB]) * c[HIDDEN] * c[EMB_BYTES]
    ex_bytes = ex_tokens = 0.0
    if c[IS_MOE]:
        touched = _touched(c, tokens)
        w_bytes -= (c[EXPERTS] - touched) * c[ONE_EXPERT] * c[MOE_LAYERS] * c[BPV]
        ex_bytes = touched * c[ONE_EXPERT] * c[MOE_LAYERS] * c[BPV] / c[SHARD]
        ex_tokens = tokens * c[TOPK] / touched if touched else 0.0
    w_bytes /= c[SHARD]
    acts = 2 * tokens * c[HIDDEN] * c[ACT_BYTES] * c[NUM_LAYERS] / c[PP]
    comm = 2 * c[NUM_LAYERS] * _allreduce_s(c, tokens * c[HIDDEN] * c[ACT_BYTES])
    ex_flops = c[EX_FLOPS_PER_TOKEN] * tokens / c[SHARD]
    mm_flops = (2 * c[DENSE] * tokens + 2 * c[LM_HEAD] * lm_tokens) / c[SHARD]
    # roofline.StepCost._op_times
    bw, peak = c[BW], c[PEAK]
    mfu = c[MFU_MAX] * tokens / (tokens + c[MFU_HALF])
    mfu_16 = c[MFU_MAX16] * tokens / (tokens + c[MFU_HALF])
    x = w_bytes / c[LAYERS]
    w_mbu = c[W_MBU_MAX] * x / (x + c[MBU_HALF]) if x > 0 else c[W_MBU_MAX]
    x = kv / c[LAYERS]
    kv_mbu = c[KV_MBU_MAX] * x / (x + c[KV_MBU_HALF]) if x > 0 else c[KV_MBU_MAX]
    ex_f = c[EX_F] if (ex_flops or ex_bytes) else 1.0
    ex_comp = ex_flops / (peak * (c[MFU_MAX] * ex_tokens / (ex_tokens + c[MFU_HALF])) * ex_f) if ex_flops else 0.0
    ex_mem = ex_bytes / (bw * w_mbu * ex_f)
    mm_comp = (mm_flops - ex_flops) / (peak * mfu)
    mm_mem = (w_bytes - ex_bytes + acts) / (bw * w_mbu)
    at_comp = attn / c[SHARD] / (c[ATTN_PEAK] * mfu_16)
    at_mem = kv / (bw * kv_mbu) if kv else 0.0
    if c[KERNELS] and tokens > 0:  # roofline.StepCost._measured: kernel_steps.MeasuredSteps.groups, measured_ops
        t_all, t_lm = max(1, round(tokens)), round(lm_tokens)
        g = 0.0
        for s in range(len(model[1])):
            runs = model[1][s, 2]
            t = _gemm_s(model, T_GEMM, t_all, model[1][s, 0], model[1][s, 1]) if runs else 0.0
            g += t * runs
        if not math.isnan(g) and t_lm:
            g += _gemm_s(model, T_GEMM16, t_lm, np.int64(c[LM_N]), np.int64(c[LM_K]))
        a = _part(model, decodes, ctx, 1) if decodes > 0 else 0.0
        for j in range(count):
            a += _part(model, 1.0, spec[3 * j], spec[3 * j + 1])
        a *= c[NUM_LAYERS]
        if not math.isnan(g):
            mm_comp, mm_mem = _to(mm_comp, mm_mem, g / c[PP] + acts / (bw * c[W_MBU_MAX]))
        if not math.isnan(a):
            at_comp, at_mem = _to(at_comp, at_mem, a / c[PP])
        if c[TP] > 1 and comm:
            ar = look_up(model, T_ALL_REDUCE, np.int64(c[TP]), t_all * np.int64(c[HIDDEN]), 0)
            if not math.isnan(ar):
                comm = 2 * c[NUM_LAYERS] * ar
    # roofline.StepCost._total
    experts = max(ex_comp, ex_mem) + (c[EXPERTS_FIXED_S] if c[IS_MOE] else 0.0)
    core = (max(mm_comp, mm_mem) + experts + max(at_comp, at_mem)) * c[PP]
    waiting = max(0.0, c[HOST_S] - core - comm)
    return core + comm + waiting + (c[PREFILL_OVERHEAD] if count else c[DECODE_OVERHEAD])
