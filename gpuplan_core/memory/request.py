"""A scenario's memory question: the MemoryRequest the budget answers."""

from __future__ import annotations

from ..hardware.engines import LATEST
from ..model.formats import get_format
from ..results.plan import Pick
from ..scenario.scenario import Scenario
from .components import Assumptions, MemoryRequest


def memory_request(sc: Scenario, batch: int | None = None, **update) -> MemoryRequest:
    """The memory question of a scenario: its own job, formats, layout, training and runtime parts, the lengths
    and batch the budget is taken at (``update`` overrides any field, flat names into their part). The job's method
    is the one the run trains with; what is offloaded is what the layout allows (``Parallelism.effective_offload``);
    inference splits no sequence (cp 1); the GPU type is the engines' argument, not part of the question; the engine's
    release line, where set to an older line than the engine's latest, is the version the memory rules read."""
    job, req, par = sc.job, sc.request, sc.parallelism
    inference = job.mode == "inference"
    layout = {"gpu": None, "offload": par.effective_offload, "cp": 1 if inference else par.cp}
    if inference:  # serving runs expert parallel where the layout search picks it (``pick_request``) or the user
        ep = par.serving_ep(sc.model())  # set it for an MoE model: one replica of ep GPUs at tp = pp = 1
        layout |= {"ep": ep, "tp": 1, "pp": 1, "gpus": ep} if (ep or 1) > 1 else {"ep": None}
    fields = dict(
        job=job.model_copy(update={"method": job.training_method}),
        formats=sc.formats,
        parallelism=par.model_copy(update=layout),
        training=sc.training,
        runtime=sc.assumptions,
        context_tokens=sc.context_tokens,
        batch=batch if batch is not None else req.batch_or_one,
        prefill_tokens=req.input_tokens if inference else None,
    )
    line = sc.assumptions.engine_version
    if line and line != LATEST.get(sc.assumptions.engine):  # an older line's memory rules (vLLM 0.6: V0's profile
        fields["assumptions"] = Assumptions(stated_engine_version=line)  # run); the latest's are the current release's
    fields.update(update)
    return MemoryRequest(**fields)


def pick_request(sc: Scenario, pick: Pick) -> MemoryRequest:
    """The memory question at a pick's layout (the plan's search result): serving, one replica of its tp x pp (or
    its EP degree) in its weights format; training, its GPUs at its tp, pp, ZeRO stage, recompute, pipeline schedule
    and EP (a GPU count that whole nodes round up past a multiple of tp x pp budgets one tp x pp group). The answer's
    memory per GPU is this request's budget."""
    if sc.job.mode == "inference":  # an expert-parallel replica: ep GPUs at tp = pp = 1
        fmt = get_format(pick.weights_format).name
        return memory_request(sc, weights_format=fmt, tp=pick.tp, pp=pick.pp, gpus=pick.replica_gpus, ep=pick.ep)
    copy = pick.tp * pick.pp * (pick.cp or 1)
    gpus = pick.gpus if pick.gpus % copy == 0 else copy
    zero = sc.parallelism.zero_stage if pick.zero_stage is None else pick.zero_stage
    rec = {} if pick.recompute is None else {"recompute": pick.recompute}  # as the search chose it
    picked = ("virtual_stages", "ep", "cp", "shard_gpus")  # schedule, EP, CP, HSDP group
    rec |= {k: v for k in picked if (v := getattr(pick, k)) is not None}
    return memory_request(sc, pick.micro_batch, tp=pick.tp, pp=pick.pp, gpus=gpus, zero_stage=zero, **rec)
