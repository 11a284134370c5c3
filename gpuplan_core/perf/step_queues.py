"""The step loop's queues on arrays (step_loop.py, compiled): a binary heap of (key, id) pairs in two arrays (engine
arrivals by time, decode ends by decode step), arrays that double when full, a closed-loop client's next send, and
what a decoding sequence's steps write and the KV cache holds (speculative decoding: speculative.py)."""

from __future__ import annotations

import math

import numpy as np

from ..common.jit import njit


@njit
def grown(a):
    b = np.empty(2 * len(a), a.dtype)
    b[: len(a)] = a
    return b


@njit
def push(keys, ids, size, key, k):
    """Push (key, k) on the heap held in keys[:size], ids[:size] (ordered as the tuples (key, k))."""
    i = size
    keys[i], ids[i] = key, k
    while i > 0:
        p = (i - 1) // 2
        if keys[p] < keys[i] or (keys[p] == keys[i] and ids[p] < ids[i]):
            break
        keys[p], keys[i] = keys[i], keys[p]
        ids[p], ids[i] = ids[i], ids[p]
        i = p


@njit
def pop(keys, ids, size):
    """Pop the heap's least (key, k) (``size`` is its size before); its id."""
    k = ids[0]
    last = size - 1
    keys[0], ids[0] = keys[last], ids[last]
    i = 0
    while True:
        a, b, m = 2 * i + 1, 2 * i + 2, i
        if a < last and (keys[a] < keys[m] or (keys[a] == keys[m] and ids[a] < ids[m])):
            m = a
        if b < last and (keys[b] < keys[m] or (keys[b] == keys[m] and ids[b] < ids[m])):
            m = b
        if m == i:
            return k
        keys[m], keys[i] = keys[i], keys[m]
        ids[m], ids[i] = ids[i], ids[m]
        i = m


@njit
def send_next(closed, next_id, n, now, request_in_s, request_out_s, sent, arrive, arr_t, arr_k, arr_n):
    """A request ended now: a closed-loop client sends its next one, if the run has any left (clients.Clients
    .finish). The next id to send and the arrival heap's size."""
    if closed and next_id < n:
        sent[next_id] = now + request_out_s
        arrive[next_id] = sent[next_id] + request_in_s
        push(arr_t, arr_k, arr_n, arrive[next_id], next_id)
        return next_id + 1, arr_n + 1
    return next_id, arr_n


@njit
def decode_steps(tokens, per_step):
    """Decode steps a sequence takes to write ``tokens`` output tokens at ``per_step`` tokens a step: ``tokens``
    itself without speculation, else ceil(tokens / per_step) (speculative.py: the expected tokens a verify step
    yields)."""
    if per_step == 1.0:
        return tokens
    return np.int64(math.ceil(tokens / per_step))


@njit
def written(steps, per_step):
    """Output tokens ``steps`` decode steps write: ``steps``, or floor(steps x per_step) with speculation."""
    if per_step == 1.0:
        return steps
    return np.int64(math.floor(steps * per_step))


@njit
def kv_held(kv_prompts, kv_offset, kv_dec, kv_steps, joined_sum, per_step):
    """Tokens the KV cache holds: prompts being read, and each decoding sequence's context when it joined plus
    what it has written since (``written`` of its decode steps, summed over the sequences)."""
    held = kv_prompts + kv_offset + kv_dec * kv_steps
    if per_step != 1.0:
        steps = kv_dec * kv_steps - joined_sum
        held += written(steps, per_step) - steps
    return held


@njit
def first_at(pending, pend_n, first, t_first, sent, lo, hi, give_up, give_up_ttft_s):
    """TurboMind (step_loop.py): the pending prompts' first tokens, all at ``t_first``; how many of the measured ones
    (ids ``lo`` to ``hi``) came more than ``give_up_ttft_s`` after they were sent, where the run gives up."""
    late = 0
    for i in range(pend_n):
        k = pending[i]
        first[k] = t_first
        if give_up and lo <= k < hi and t_first - sent[k] > give_up_ttft_s:
            late += 1
    return late


@njit
def rank_wait(sync, ranks, t, k_steps):
    """Attention data-parallel ranks run every step together (each MoE layer's all-to-all or all-gather waits for
    every rank: SGLang ``--enable-dp-attention`` pads an idle rank with an idle batch, TensorRT-LLM
    ``enable_attention_dp``), so a step lasts as long as the slowest rank's. ``k_steps`` decode-only steps of this
    rank taking ``t`` seconds: (their time, the share ``q`` of them in which one of the other ``ranks - 1`` busy
    ranks runs a prompt step, this rank's own decode step, that prompt step's time). Each other rank is drawn from
    the same load as this one: it runs a prompt step in the share of steps this rank has so far (``sync``: steps,
    of them with prompt chunks, their seconds), independently, at this rank's mean prompt step's time. One rank, no
    prompt step yet or none longer: ``t`` unchanged, q = 0."""
    own = t / k_steps
    if ranks <= 1 or sync[1] == 0 or sync[2] / sync[1] <= own:
        return t, 0.0, own, 0.0
    alone = 1.0  # none of the others prompts: (1 - share) ^ (ranks - 1), multiplied out (the same bits compiled)
    for _ in range(ranks - 1):
        alone *= 1.0 - sync[1] / sync[0]
    q, waited = 1.0 - alone, sync[2] / sync[1]
    return k_steps * (own + q * (waited - own)), q, own, waited


@njit
def record_gap(gaps, weights, g_n, t, k_steps, decoding, per, q, own, waited):
    """Append ``k_steps`` decode steps' inter-token gap (their time ``t`` over the steps and over the tokens ``per``
    step) and their ``decoding`` x ``k_steps`` tokens; where another rank's prompt step set a share ``q`` of them
    (``rank_wait``), this rank's ``own`` gap for the rest and that share's tokens ``waited`` apart."""
    if g_n + 2 > len(gaps):
        gaps, weights = grown(gaps), grown(weights)
    tokens = decoding * k_steps
    late = int(q * tokens + 0.5) if q > 0.0 else 0
    gaps[g_n], weights[g_n] = (t / k_steps / per if q == 0.0 else own / per), tokens - late
    g_n += 1
    if late:
        gaps[g_n], weights[g_n] = waited / per, late
        g_n += 1
    return gaps, weights, g_n
