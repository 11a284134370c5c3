"""Training plans: on each offer, the job's GPU-hours, wall time and cost at a layout that holds it (tensor x
pipeline x data parallel and a ZeRO stage, from training_layout.py); the rule for the GPU count. The pick's why-chain
is in why.py.

    compute    = c x (active parameters + layers x sequence x attention width) x tokens   (c = 6, LoRA/QLoRA 4)
    MFU        = predicted for the layout on the offer's GPUs and network (perf/training_step.py: the step's
                 matmuls, attention, elementwise ops, tensor- and data-parallel traffic, pipeline bubble and
                 optimizer), unless the user gives one
    GPU-hours  = compute / (dense BF16 peak x MFU) / 3,600 s
    wall hours = GPU-hours / GPUs
    cost       = the offer's bill for the GPUs over the wall time (whole nodes, increments, spot restarts)
                 x (1 + failed runs and sweeps)

Across machines the step model reads the offer's network per GPU; a user's MFU is used as given.

The GPU count, and how "set by the user" is known. The Scenario's ``gpus`` defaults to 1, and the app's and the
CLI's GPUs inputs start at 1: a count of 1 reads as "let the planner choose" (1 is also the smallest count there
is), and ``gpus > 1`` is a count the user set (a tensor or pipeline degree above 1 implies one: the Scenario holds
gpus a multiple of tp x pp). It is the rule the inference search uses for a layout the user set.

- Set: the layout uses exactly that count, tp x pp x dp = gpus, on as many machines as the offer's GPUs per machine
  require, coupled over the offer's network. Where it cannot run on an offer (no tp x pp holds the job on that many
  GPUs at the chosen ZeRO stage or any above; tensor parallel beyond what the machine allows; machines without a
  fast network between them) the offer is rejected with the reason, and the nearest count that runs on it is
  priced as an alternative whose miss names the count asked.
- Not set: the smallest count that holds the job, grown in steps of tp x pp to meet a deadline; an offer without a
  fast network between machines keeps it to one machine.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import asdict, dataclass, field

from ..common.text import figure
from ..common.units import SECONDS_PER_HOUR
from ..hardware.catalog import GPU, get_gpu
from ..model.arch import ModelArch, params_active, params_total
from ..perf.efficiency import PerfAssumptions
from ..perf.training_step import StepLayout, TrainingStep, low_precision_runs, training_step
from ..pricing.billing import gpu_hours, run_cost, training_flops
from ..pricing.offers import Offer
from ..scenario.fields import MAX_LAYOUT_GPUS
from ..scenario.scenario import Scenario
from .search import Rejection, layout_label
from .training_layout import (
    TrainingLayout,
    cannot_run,
    layouts_at,
    machines_of,
    nearest_count,
    network_text,
    training_layout,
    training_shapes,
)

PRE_TRAINING_GLOBAL_BATCH_TOKENS = 4 * 1024 * 1024  # Llama 2 and 3's 4M-token batches; fine-tuning: one micro-batch
NETWORK_GBIT_S_PER_GPU_UNSTATED = 100.0  # an offer that does not state its network speed (a 100 Gbit/s-class NIC)


def count_set(sc: Scenario) -> bool:
    """Whether the user set the GPU count: any count above the default of 1 (see the module docstring)."""
    return sc.parallelism.gpus > 1


@dataclass
class TrainingCandidate:
    gpu: str
    weights_format: str
    offer: Offer
    gpus: int
    nodes: int  # machines: ceil(GPUs / the offer's GPUs per machine)
    tp: int
    pp: int
    zero_stage: int
    run_cost_usd: float
    wall_hours: float
    gpu_hours: float
    monthly_usd: float | None = None
    replicas: int = 1  # data-parallel ranks: gpus / (tp x pp)
    output_cost_per_million_usd: float | None = None
    input_cost_per_million_usd: float | None = None
    misses: list[str] = field(default_factory=list)
    why: list[str] = field(default_factory=list)
    count_reason: str = ""  # how the count was chosen, for the why-chain
    mfu: float | None = None  # the MFU the run's GPU-hours use (predicted, or the user's)
    step: TrainingStep | None = None  # the predicted step (None when the user set the MFU)
    alternative_to: int | None = None  # the count asked, when this is the nearest count that runs instead

    @property
    def rank_cost(self) -> float:
        return self.run_cost_usd


@dataclass
class TrainingWork:
    """The job, the same on every GPU: its FLOPs, tokens and the user's MFU (None: predicted per layout)."""

    training_flops: float
    training_tokens: float
    mfu: float | None
    tokens_note: str | None


def training_tokens_of(sc: Scenario, m: ModelArch) -> tuple[float, str | None]:
    if sc.training.training_tokens:
        return sc.training.training_tokens, None
    tokens = 20.0 * params_total(m)
    return tokens, f"no training tokens given: {tokens:.3g} assumed (20 tokens per parameter, Chinchilla)"


def training_work(m: ModelArch, sc: Scenario) -> TrainingWork:
    tokens, note = training_tokens_of(sc, m)
    method = sc.job.method if sc.job.mode == "finetune" else "full"
    attn_width = m.num_attention_heads * (m.v_head_dim if m.is_mla else m.d)
    flops = training_flops(params_active(m), tokens, m.num_layers, sc.context_tokens, attn_width, method)
    return TrainingWork(flops, tokens, sc.training.mfu, note)


def step_layout(sc: Scenario, o: Offer | None, tp: int, pp: int, gpus: int, zero_stage: int) -> StepLayout:
    """The step the run takes on ``gpus`` of this offer (its GPUs per machine and network per GPU)."""
    per_node = o.machine_gpus if o is not None else 8
    gbit = (o.inter_node_gbit_s if o is not None else None) or NETWORK_GBIT_S_PER_GPU_UNSTATED * per_node
    tr, cp = sc.training, sc.parallelism.cp
    micro, seq = sc.request.batch_or_one, sc.context_tokens
    dp = max(1, gpus // (tp * pp * cp))
    frozen = sc.job.mode == "finetune" and sc.job.training_method in ("lora", "qlora")
    # pre-training: a 4M-token batch; fine-tuning: one micro-batch per rank a step, 4 x the stages with a pipeline
    glob = (
        PRE_TRAINING_GLOBAL_BATCH_TOKENS if sc.job.mode == "training" else micro * seq * dp * (4 * pp if pp > 1 else 1)
    )
    return StepLayout(
        gpus=gpus, tp=tp, pp=pp, cp=cp, zero_stage=zero_stage, micro_batch=micro, seq_len=seq,
        global_batch_tokens=max(glob, micro * seq * dp), precision=tr.precision, frozen_base=frozen,
        recompute=tr.recompute, recompute_every=tr.recompute_every, gpus_per_node=per_node,
        inter_node_gbit_s_per_gpu=gbit / per_node,
    )  # fmt: skip


def run_mfu(m: ModelArch, sc: Scenario, gpu: GPU, o: Offer | None, lay: TrainingLayout, work: TrainingWork):
    """(MFU, the predicted step or None when the user set the MFU)."""
    if work.mfu is not None:
        return work.mfu, None
    step = training_step(m, gpu, step_layout(sc, o, lay.tp, lay.pp, lay.gpus, lay.zero_stage))
    return step.mfu, step


# ---- the candidates ---------------------------------------------------------------------------------------


def _fastest(m: ModelArch, sc: Scenario, gpu: GPU, o: Offer, lays: list[TrainingLayout], work: TrainingWork
             ) -> TrainingLayout:  # fmt: skip
    """Of the layouts that hold the job on the count set, the one whose predicted step is the shortest; the first in
    order of preference when the user set the MFU or a tensor / pipeline split of their own."""
    if work.mfu is not None or len(lays) == 1 or sc.parallelism.tp * sc.parallelism.pp > 1:
        return lays[0]
    return max(lays, key=lambda lay: run_mfu(m, sc, gpu, o, lay, work)[0])


def _priced(m: ModelArch, o: Offer, gpu: GPU, lay: TrainingLayout, work: TrainingWork, sc: Scenario
            ) -> TrainingCandidate:  # fmt: skip
    """One offer running the job on the layout's GPUs: its GPU-hours, wall time and cost."""
    count = lay.gpus
    peak = gpu.dense_peak_flops("bf16")[0]
    mfu, step = run_mfu(m, sc, gpu, o, lay, work)
    gh = gpu_hours(work.training_flops, peak, mfu)
    wall = gh / count
    late = sc.training.deadline_hours and wall > sc.training.deadline_hours * 1.0001
    rc = run_cost(o, count, wall * SECONDS_PER_HOUR, sc.pricing.spot_restart_overhead, sc.pricing.hours_per_month)
    how = "predicted for this layout" if step is not None else "as you set it"
    why = [
        f"{count} GPUs (ZeRO-{lay.zero_stage}, TP {lay.tp}, PP {lay.pp}), {figure(gh, 4)} GPU-hours at MFU "
        f"{mfu:.2f} ({how}) of {peak / 1e12:,.0f} TFLOP/s dense BF16",
        f"+{sc.training.overhead_factor:.0%} for failed runs and sweeps",
        *rc.notes,
        *lay.notes,
    ]
    prec = sc.training.precision
    if step is not None and prec in ("fp8", "mxfp8", "nvfp4") and not low_precision_runs(gpu, prec):
        why.append(f"the {gpu.label} has no {prec.upper()} tensor cores: the recipe's matmuls run at BF16 speed")
    return TrainingCandidate(
        gpu.gpu, sc.formats.weights_format, o, count, machines_of(o, count), lay.tp, lay.pp, lay.zero_stage,
        rc.run_cost_usd * (1 + sc.training.overhead_factor), wall, gh, replicas=count // (lay.tp * lay.pp),
        misses=[f"{wall:,.0f} h > deadline {sc.training.deadline_hours:,.0f} h"] if late else [], why=why,
        count_reason=lay.reason, mfu=mfu, step=step,
    )  # fmt: skip


def _at_planners_count(m: ModelArch, sc: Scenario, gpu: GPU, offers: list[Offer], work: TrainingWork,
                       rejected: list[Rejection]) -> list[TrainingCandidate]:  # fmt: skip
    """No count set: the smallest that holds the job, grown in steps of tp x pp to meet a deadline."""
    gid = gpu.gpu
    lay = training_layout(m, sc, gpu)
    if lay is None:
        rejected.append(
            Rejection(gid, f"model states + activations do not fit on any layout up to {MAX_LAYOUT_GPUS:,} GPUs")
        )
        return []
    peak = gpu.dense_peak_flops("bf16")[0]
    step = lay.tp * lay.pp
    out = []
    for o in offers:
        if problem := o.layout_problem(lay.tp, 1):  # tensor parallel inside one machine, over NVLink above 2
            rejected.append(
                Rejection(gid, problem, sc.formats.weights_format, o.offer_id, layout_label(gid, lay.tp, lay.pp))
            )
            continue
        count, reason = lay.gpus, "no count set (1, the default): the smallest that holds the job"
        if sc.training.deadline_hours:
            need = count
            for _ in range(3):  # the MFU at the count needed, which changes the count a little
                mfu, _step = run_mfu(m, sc, gpu, o, TrainingLayout(lay.tp, lay.pp, need, lay.zero_stage), work)
                need = max(need, math.ceil(gpu_hours(work.training_flops, peak, mfu) / sc.training.deadline_hours
                                           - 1e-9))  # fmt: skip
                need = math.ceil(need / step) * step
            if need > count:
                count = math.ceil(need / step) * step
                reason = f"no count set: grown in steps of {step} to finish within {sc.training.deadline_hours:,.0f} h"
        notes = list(lay.notes)
        if count > o.machine_gpus and not o.fast_network:
            if lay.gpus > o.machine_gpus:
                rejected.append(Rejection(gid, f"needs {lay.gpus} GPUs across machines: a coupled job needs a fast "
                                          f"RDMA network; this offer has {network_text(o)}", sc.formats.weights_format,
                                          o.offer_id))  # fmt: skip
                continue
            capped, count = count, o.machine_gpus // step * step  # one machine: the most it holds
            reason = "no count set: the most one machine holds, the offer having no fast network between machines"
            notes.append(f"kept to one machine ({count} GPUs, not {capped}): the offer has no stated fast network "
                         "between machines")  # fmt: skip
        out.append(_priced(m, o, gpu, TrainingLayout(lay.tp, lay.pp, count, lay.zero_stage, notes, reason), work, sc))
    return out


def _at_users_count(m: ModelArch, sc: Scenario, gpu: GPU, offers: list[Offer], work: TrainingWork,
                    rejected: list[Rejection]) -> list[TrainingCandidate]:  # fmt: skip
    """A count set: exactly that many GPUs, or the reason it cannot run and the nearest count that does."""
    gid, n = gpu.gpu, sc.parallelism.gpus
    shapes = training_shapes(m, sc, gpu)
    out = []
    for o in offers:
        problem = cannot_run(shapes, n, o, gpu, sc.parallelism.zero_stage)
        if problem is None:
            lay = _fastest(m, sc, gpu, o, layouts_at(shapes, n, o), work)
            if lay.zero_stage != sc.parallelism.zero_stage:
                lay.notes.append(
                    f"ZeRO-{lay.zero_stage}: at ZeRO-{sc.parallelism.zero_stage} the job does not fit {n:,} GPUs"
                )
            if (lay.tp, lay.pp) != (sc.parallelism.tp, sc.parallelism.pp) and sc.parallelism.tp * sc.parallelism.pp > 1:
                lay.notes.append(
                    f"TP {lay.tp}, PP {lay.pp}: at your TP {sc.parallelism.tp}, PP {sc.parallelism.pp} it does not "
                    f"fit {n:,} GPUs"
                )
            lay.reason = "the count you set (a count above the default of 1 is used as it is)"
            out.append(_priced(m, o, gpu, lay, work, sc))
            continue
        rejected.append(Rejection(gid, problem, sc.formats.weights_format, o.offer_id))
        alt = nearest_count(shapes, n, o)
        if alt is None:
            continue
        alt.reason = f"the nearest count that runs on this offer, not the {n:,} you set"
        c = _priced(m, o, gpu, alt, work, sc)
        c.misses.insert(0, f"{alt.gpus:,} GPUs, not the {n:,} you set: {problem}")
        c.alternative_to = n
        out.append(c)
    return out


def training_candidates(
    m: ModelArch, sc: Scenario, offers: list[Offer], pa: PerfAssumptions
) -> tuple[list[TrainingCandidate], list[Rejection], dict]:
    """Every GPU type x offer (serverless aside) priced for the run; the rejected with their reasons; the job's
    FLOPs, tokens and MFU."""
    work = training_work(m, sc)
    cands: list[TrainingCandidate] = []
    rejected: list[Rejection] = []
    by_gpu: dict[str, list[Offer]] = {}
    for o in offers:
        if not o.is_serverless:
            by_gpu.setdefault(o.gpu, []).append(o)
    price = _at_users_count if count_set(sc) else _at_planners_count
    for gid, gpu_offers in by_gpu.items():
        cands += price(m, sc, get_gpu(gid), gpu_offers, work, rejected)
    return cands, rejected, asdict(work)


def training_message(sc: Scenario, missed: list[TrainingCandidate], rejected: list[Rejection]) -> str:
    """Why nothing qualifies: the deadline cannot be met, or the count set cannot run (the reasons, the most
    common first, and what the nearest count that runs would cost)."""
    alts = sorted((c for c in missed if c.alternative_to), key=lambda c: c.rank_cost)
    if count_set(sc) and not any(c.alternative_to is None for c in missed):
        why = [r for r, _ in Counter(r.reason for r in rejected if r.offer_id).most_common(2)]
        text = (
            f"{sc.parallelism.gpus:,} GPUs cannot run this job: " + ("; ".join(why) or "no offer rents this GPU") + "."
        )
        if alts:
            a = alts[0]
            where = "one machine" if a.nodes == 1 else f"{a.nodes:,} machines"
            text += (
                f" The nearest count that runs: {a.gpus:,} GPUs on {where} of {a.offer.offer_id}, "
                f"{a.run_cost_usd:,.0f} USD over {a.wall_hours:,.0f} h."
            )
        return text
    late = sorted({x for c in missed if not c.alternative_to for x in c.misses})[:2]
    return (
        "No configuration fits and meets the deadline: "
        + ("; ".join(late) or "no offer can run it")
        + ". Allow a later deadline, a higher ZeRO stage, or offers with a fast network between machines."
    )
