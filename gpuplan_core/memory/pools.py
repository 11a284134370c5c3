"""The memory of a disaggregated (P/D) pick's pools (plan/disaggregated.py): one GPU of a prefill worker at its
tensor parallel and one GPU of a decode worker at its own, each the memory engine's budget (memory/budget.py) of
the scenario's question (its lengths, batch and formats, memory/request.py) at that worker's layout, against what
one GPU of the pick's type may fill (memory/fit.py ``budget_bytes``)."""

from __future__ import annotations

from ..hardware.catalog import get_gpu
from ..model.formats import get_format
from ..results.memory import PoolMemory
from ..results.plan import Pick, layout_label
from ..scenario.scenario import Scenario
from .budget import memory_budget
from .components import MemoryRequest
from .fit import budget_bytes
from .request import memory_request


def pool_request(sc: Scenario, pick: Pick, tp: int) -> MemoryRequest:
    """The memory question of one worker of ``tp`` GPUs of a P/D pick: the scenario's, in the pick's weights format,
    at tensor parallel ``tp`` (no pipeline stages, no expert parallel: the split's scope)."""
    return memory_request(sc, weights_format=get_format(pick.weights_format).name, tp=tp, pp=1, gpus=tp, ep=None)


def pool_memory(sc: Scenario, pick: Pick) -> list[PoolMemory]:
    """Each pool's worker memory per GPU, prefill then decode; [] where the pick is not disaggregated."""
    d = pick.disaggregated
    if d is None:
        return []
    m, gpu = sc.model(), get_gpu(pick.gpu)
    out = []
    for pool in (d.prefill, d.decode):
        req = pool_request(sc, pick, pool.tp)
        out.append(
            PoolMemory(
                role=pool.role,
                workers=pool.workers,
                tp=pool.tp,
                layout=layout_label(pick.gpu, pool.tp, 1),
                per_gpu_bytes=round(memory_budget(m, req).per_gpu_bytes),
                budget_bytes=round(budget_bytes(gpu, req.runtime)),
            )
        )
    return out
