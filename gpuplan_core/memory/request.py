"""A scenario's memory question: the MemoryRequest the budget answers."""

from __future__ import annotations

from ..model.formats import get_format
from ..scenario.scenario import Scenario
from .components import Assumptions, MemoryRequest


def memory_request(sc: Scenario, batch: int | None = None, **update) -> MemoryRequest:
    """The memory question of a scenario: its job, formats, context, batch and layout (``update`` overrides)."""
    b = batch if batch is not None else (1 if sc.batch == "max" else sc.batch)
    fields = dict(
        mode=sc.mode,
        method=sc.method,
        weights_format=get_format(sc.weights_format).name,
        kv_format=get_format(sc.kv_format).name,
        context_tokens=sc.context_tokens,
        batch=b,
        gpus=sc.gpus,
        tp=sc.tp,
        pp=sc.pp,
        zero_stage=sc.zero_stage,
        accounting=sc.accounting,
        optimizer=sc.optimizer,
        recompute=sc.recompute,
        lora_rank=sc.lora_rank,
        offload=sc.offload if sc.offload != "optimizer+params" or sc.zero_stage == 3 else "optimizer",
        engine=sc.engine,
        prefill_tokens=sc.input_tokens if sc.mode == "inference" else None,
        assumptions=Assumptions(memory_utilization=sc.memory_utilization),
    )
    fields.update(update)
    return MemoryRequest(**fields)
