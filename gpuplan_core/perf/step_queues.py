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
