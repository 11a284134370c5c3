"""A scenario's memory question: the MemoryRequest the budget answers."""

from __future__ import annotations

from ..model.formats import get_format
from ..results.plan import Pick
from ..scenario.scenario import Scenario
from .components import Assumptions, MemoryRequest


def memory_request(sc: Scenario, batch: int | None = None, **update) -> MemoryRequest:
    """The memory question of a scenario: its job, formats, context, batch, layout, training settings and the
    memory it may fill (``update`` overrides any MemoryRequest field)."""
    job, req, par, tr = sc.job, sc.request, sc.parallelism, sc.training
    fields = dict(
        mode=job.mode,
        method=job.training_method,
        weights_format=get_format(sc.formats.weights_format).name,
        kv_format=get_format(sc.formats.kv_format).name,
        context_tokens=sc.context_tokens,
        batch=batch if batch is not None else req.batch_or_one,
        gpus=par.gpus,
        tp=par.tp,
        pp=par.pp,
        zero_stage=par.zero_stage,
        offload=par.effective_offload,
        accounting=tr.accounting,
        optimizer=tr.optimizer,
        recompute=tr.recompute,
        recompute_every=tr.recompute_every,
        precision=tr.precision,
        cross_entropy=tr.cross_entropy,
        cp=par.cp if job.mode != "inference" else 1,
        lora_targets=tr.lora_targets,
        lora_dropout=tr.lora_dropout,
        qlora_library=tr.qlora_library,
        lora_rank=tr.lora_rank,
        engine=sc.assumptions.engine,
        prefill_tokens=req.input_tokens if job.mode == "inference" else None,
        assumptions=Assumptions(memory_utilization=sc.assumptions.memory_utilization),
    )
    fields.update(update)
    return MemoryRequest(**fields)


def pick_request(sc: Scenario, pick: Pick) -> MemoryRequest:
    """The memory question at a pick's layout (the plan's search result): serving, one replica of its tp x pp in its
    weights format; training, its GPUs at its tp, pp and ZeRO stage (a GPU count that whole nodes round up past a
    multiple of tp x pp budgets one tp x pp group). The answer's memory per GPU is this request's budget."""
    if sc.job.mode == "inference":
        return memory_request(
            sc, weights_format=get_format(pick.weights_format).name, tp=pick.tp, pp=pick.pp, gpus=pick.tp * pick.pp
        )
    gpus = pick.gpus if pick.gpus % (pick.tp * pick.pp) == 0 else pick.tp * pick.pp
    zero = sc.parallelism.zero_stage if pick.zero_stage is None else pick.zero_stage
    return memory_request(sc, pick.micro_batch, tp=pick.tp, pp=pick.pp, gpus=gpus, zero_stage=zero)
