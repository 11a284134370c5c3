"""Which serving layouts hold the complete memory budget (plan/search.py's first question, before any is judged):
tensor parallel 1, 2, 4 or 8 within one machine the heads allow, pipeline stages of 8 GPUs only when no machine
holds the model, and for a mixture-of-experts model expert parallel 2, 4 or 8 (perf/expert_parallel.py); a layout
the user set is the only one tried (an MoE model's ``ep``: EP at that degree, or at 1 tensor parallel alone).
Remembered by what they read: the model, the layout asked, the GPU and the memory question (no traffic, no
prices)."""

from __future__ import annotations

from functools import lru_cache

from ..hardware.catalog import GPU
from ..memory.components import MemoryRequest
from ..memory.fit import max_batch
from ..model.arch import ModelArch, valid_tp_degrees
from ..perf.expert_parallel import EP_DEGREES
from ..scenario.layout import Parallelism

TP_DEGREES = (1, 2, 4, 8)  # within one machine (HGX boards hold 8 GPUs)
PP_STAGES = (2, 3, 4, 6, 8, 12, 16)  # of 8 GPUs each, across machines


def ep_layouts(m: ModelArch) -> list[int]:
    """The expert-parallel degrees an MoE model's serving replica is tried at: 2, 4 and 8 GPUs of one machine that
    divide its experts (none for a dense model)."""
    return [ep for ep in EP_DEGREES if m.is_moe and m.num_experts % ep == 0]


def layout_set(par: Parallelism, fixed: bool = False) -> bool:
    """Whether the user set the layout (a GPU count, tensor parallel or stages) or it is ``fixed``: only it runs."""
    return fixed or par.gpus > 1 or par.tp > 1 or par.pp > 1


def layouts_to_try(m: ModelArch, par: Parallelism, fixed: bool = False) -> list[tuple[int, int]]:
    """The user's layout when they set one (or ``fixed``); else TP 1/2/4/8 the heads allow, then stages of 8 GPUs."""
    if layout_set(par, fixed):
        return [(par.tp, par.pp)]
    tps = [t for t in valid_tp_degrees(m, 8) if t in TP_DEGREES]
    return [(t, 1) for t in tps] + ([(8, p) for p in PP_STAGES] if 8 in tps else [])


@lru_cache(maxsize=8192)
def kv_sequences(m: ModelArch, req: MemoryRequest, gpu: GPU) -> int | None:
    """Sequences of input + output tokens the layout's KV cache holds (memory.fit.max_batch), remembered; None:
    the layout is not one the model allows (its heads do not split that way)."""
    try:
        return max_batch(m, req, gpu)
    except ValueError:
        return None


@lru_cache(maxsize=4096)
def _fitting(
    m: ModelArch, par: Parallelism, fixed: bool, gpu: GPU, memory: MemoryRequest, batch: int
) -> tuple[tuple[int, int, int, int], ...]:
    """The layouts (tp, pp, sequences the KV cache holds, ep) that hold the complete memory budget at ``batch``:
    stages only when no single machine does, and then the fewest (``evaluate_layouts``); then, for an MoE model
    whose layout is not set, expert parallel over 2, 4 or 8 GPUs (``ep_layouts``: sequences per GPU); the user's
    ``ep`` (``Parallelism.serving_ep``) alone where set above 1; remembered."""
    fitting: list[tuple[int, int, int, int]] = []
    ep_set = par.serving_ep(m)  # the user's: a fixed layout (1: tensor parallel only)
    for tp, pp in layouts_to_try(m, par, fixed) if (ep_set or 1) == 1 else []:
        if pp > 1 and any(p == 1 or p < pp for _, p, _, _ in fitting):
            break  # a machine (or fewer stages) already holds it
        kv = kv_sequences(m, memory.model_copy(update={"tp": tp, "pp": pp, "gpus": tp * pp}), gpu)
        if kv is not None and kv >= batch:  # the complete budget at the scenario's batch (one notion)
            fitting.append((tp, pp, kv, 1))
    if ep_set is None and not layout_set(par, fixed) or (ep_set or 1) > 1:
        for ep in ep_layouts(m) if ep_set is None else [ep_set]:
            kv = kv_sequences(m, memory.model_copy(update={"tp": 1, "pp": 1, "gpus": ep, "ep": ep}), gpu)
            if kv is not None and kv * ep >= batch:
                fitting.append((1, 1, kv, ep))
    return tuple(fitting)
