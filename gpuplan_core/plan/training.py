"""Training plans: on each offer, the job's GPU-hours, wall time and cost at the cheapest layout that holds it (the
search over ZeRO stage x tensor x pipeline x data parallel x micro-batch is in training_search.py, the layouts'
memory in training_layout.py); the rule for the GPU count. The pick's why-chain is in why.py.

    compute    = c x (active parameters + layers x sequence x attention width) x tokens   (c = 6, LoRA/QLoRA 4)
    MFU        = predicted for the layout on the offer's GPUs and network (perf/training_step.py: the step's
                 matmuls, attention, elementwise ops, tensor- and data-parallel traffic, pipeline bubble and
                 optimizer), unless the user gives one
    GPU-hours  = compute / (dense BF16 peak x MFU) / 3,600 s
    wall hours = GPU-hours / GPUs
    cost       = the offer's bill for the GPUs over the wall time (whole nodes, increments, spot restarts)
                 x (1 + failed runs and sweeps)

Across machines the step model reads the offer's network per GPU; a user's MFU is used as given (every layout then
runs at that MFU, and the first in order of preference of the cheapest wins: the lower ZeRO stage, the user's
tp x pp, the larger micro-batch, fewer GPUs per copy).

The GPU count, and how "set by the user" is known. The Scenario's ``gpus`` defaults to 1, and the app's and the
CLI's GPUs inputs start at 1: a count of 1 reads as "let the planner choose" (1 is also the smallest count there
is), and ``gpus > 1`` is a count the user set (a tensor or pipeline degree above 1 implies one: the Scenario holds
gpus a multiple of tp x pp). It is the rule the inference search uses for a layout the user set.

- Set: the layout uses exactly that count, tp x pp x dp = gpus, on as many machines as the offer's GPUs per machine
  require, coupled over the offer's network. Where it cannot run on an offer the offer is rejected with the reason,
  and the nearest count that runs on it is priced as an alternative whose miss names the count asked.
- Not set: per layout, the fewest GPUs that hold the job, grown in steps of tp x pp x cp to finish within the
  deadline, or without one within the default deadline (30 days; never a miss); an offer without a fast network
  between machines keeps it to one machine. The fewest GPUs that hold the job are stated as the alternative.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache

from pydantic import ConfigDict, Field, InstanceOf

from ..common.text import counted, figure
from ..common.units import SECONDS_PER_HOUR
from ..hardware.catalog import GPU, get_gpu
from ..memory.budget import memory_budget
from ..memory.fit import budget_bytes
from ..memory.request import memory_request
from ..memory.training import lora_params, micro_batch_activation_bytes
from ..model.arch import ModelArch, params_active, params_total
from ..perf.training_step import (
    StepLayout,
    TrainingStep,
    dequant_bytes_per_param,
    low_precision_runs,
    training_band,
    training_step,
)
from ..pricing.billing import gpu_hours, run_cost, training_flops
from ..pricing.offers import Offer
from ..results.plan import Pick
from ..scenario.scenario import Scenario
from .search import Rejection
from .training_ask import TrainingAsk
from .training_layout import TrainingLayout, machines_of
from .training_options import global_batch_tokens

NETWORK_GBIT_S_PER_GPU_UNSTATED = 100.0  # an offer that does not state its network speed (a 100 Gbit/s-class NIC)


def count_set(ask: Scenario | TrainingAsk) -> bool:
    """Whether the user set the GPU count: any count above the default of 1 (see the module docstring)."""
    return ask.parallelism.gpus > 1


class TrainingCandidate(Pick):
    """A priced training configuration: the Pick it is (its fields, its JSON), with what the search and the
    why-chain read beside it (left out of the JSON)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    offer: Offer = Field(exclude=True)
    gpu_hours: float = Field(exclude=True)
    count_reason: str = Field("", exclude=True, description="how the count was chosen, for the why-chain")
    step: InstanceOf[TrainingStep] | None = Field(
        None, exclude=True, description="the predicted step (None when the user set the MFU)"
    )
    alternative_to: int | None = Field(
        None, exclude=True, description="the count asked, when this is the nearest count that runs instead"
    )
    tried: list[str] = Field(
        default_factory=list, exclude=True, description="what the search tried and why this won, for the why-chain"
    )
    fewest: TrainingCandidate | None = Field(
        None, exclude=True, description="no count set: the run on the fewest GPUs that hold the job"
    )

    @property
    def rank_cost(self) -> float:
        return self.run_cost_usd

    @property
    def label(self) -> str:
        """'ZeRO-3, DP 64' / 'ZeRO-0, TP 2 x PP 2 x DP 16' / 'ZeRO-1, PP 4 (interleaved x2) x DP 16 (EP 8)' /
        'ZeRO-3 (HSDP groups of 8), DP 64'."""
        pp = f"PP {self.pp}" + (f" (interleaved x{self.virtual_stages})" if (self.virtual_stages or 1) > 1 else "")
        pp += " (zero bubble)" if self.pipeline_schedule == "zb-h1" and self.pp > 1 else ""
        dp = f"DP {self.replicas:,}" + (f" (EP {self.ep})" if (self.ep or 1) > 1 else "")
        split = [f"TP {self.tp}"] * (self.tp > 1) + [pp] * (self.pp > 1) + [f"CP {self.cp}"] * ((self.cp or 1) > 1)
        split += [dp]
        hsdp = f" (HSDP groups of {self.shard_gpus})" if self.shard_gpus else ""
        return f"ZeRO-{self.zero_stage}{hsdp}, " + " x ".join(split)


@dataclass
class TrainingWork:
    """The job, the same on every GPU: its FLOPs, tokens and the user's MFU (None: predicted per layout)."""

    training_flops: float
    training_tokens: float
    mfu: float | None
    tokens_note: str | None
    steps: dict = field(default_factory=dict, repr=False)  # the step model's answers by layout and network

    def summary(self) -> dict:
        """What the plan states of the job: its FLOPs, tokens, the user's MFU and the tokens' note."""
        return {k: getattr(self, k) for k in ("training_flops", "training_tokens", "mfu", "tokens_note")}


def training_tokens_of(ask: TrainingAsk, m: ModelArch) -> tuple[float, str | None]:
    if ask.training.training_tokens:
        return ask.training.training_tokens, None
    tokens = 20.0 * params_total(m)
    return tokens, f"no training tokens given: {tokens:.3g} assumed (20 tokens per parameter, Chinchilla)"


def training_work(m: ModelArch, ask: TrainingAsk) -> TrainingWork:
    tokens, note = training_tokens_of(ask, m)
    attn_width = m.num_attention_heads * (m.v_head_dim if m.is_mla else m.d)
    flops = training_flops(params_active(m), tokens, m.num_layers, ask.context_tokens, attn_width, ask.method)
    return TrainingWork(flops, tokens, ask.training.mfu, note)


def step_layout(m: ModelArch, ask: Scenario | TrainingAsk, o: Offer | None, lay: TrainingLayout) -> StepLayout:
    """The step the run takes on the layout's GPUs of this offer (its GPUs per machine and network per GPU)."""
    ask = TrainingAsk.of(ask)
    per_node = o.machine_gpus if o is not None else 8
    gbit = (o.inter_node_gbit_s if o is not None else None) or NETWORK_GBIT_S_PER_GPU_UNSTATED * per_node
    tr, cp = ask.training, lay.cp
    micro, seq, tp, pp = lay.micro_batch, ask.context_tokens, lay.tp, lay.pp
    dp = max(1, lay.gpus // (tp * pp * cp))
    frozen = ask.method in ("lora", "qlora")
    return StepLayout(
        gpus=lay.gpus,
        tp=tp,
        pp=pp,
        cp=cp,
        zero_stage=lay.zero_stage,
        micro_batch=micro,
        seq_len=seq,
        global_batch_tokens=global_batch_tokens(ask, micro, pp, dp),
        virtual_stages=lay.virtual_stages,
        pipeline_schedule=lay.schedule,
        ep=lay.ep,
        shard_gpus=lay.shard_gpus,
        precision=tr.precision,
        frozen_base=frozen,
        recompute=lay.recompute or tr.recompute,
        recompute_every=tr.recompute_every,
        gpus_per_node=per_node,
        inter_node_gbit_s_per_gpu=gbit / per_node,
        adapter_params=lora_params(m, tr.lora_rank, tr.lora_targets) if frozen else 0.0,
        adapter_rank=tr.lora_rank,
        dequant_bytes_per_param=dequant_bytes_per_param(tr.qlora_library) if ask.method == "qlora" else 0.0,
        offload_bytes_per_micro_batch=_offloaded_bytes(m, ask, lay) if tr.activation_offload else 0.0,
        paged_bytes_per_step=_paged_bytes(m, ask, o, lay) if tr.paged_optimizer else 0.0,
    )


def _paged_bytes(m: ModelArch, ask: TrainingAsk, o: Offer | None, lay: TrainingLayout) -> float:
    """A paged optimizer: the states on one GPU of the layout that do not fit its budget beside the rest (paged to the
    host and back each step); none without an offer's GPU to fit."""
    if o is None:
        return 0.0
    req = memory_request(ask, lay.micro_batch, recompute=lay.recompute or ask.training.recompute, **_at(lay))
    budget = memory_budget(m, req)
    states = sum(v for k, v in budget.offloaded.items() if k.endswith("(paged)"))
    return min(states, max(0.0, budget.per_gpu_bytes + states - budget_bytes(get_gpu(o.gpu), req.runtime)))


def _at(lay: TrainingLayout) -> dict:
    """The layout's fields as a memory question names them."""
    return dict(
        tp=lay.tp,
        pp=lay.pp,
        cp=lay.cp,
        gpus=lay.gpus,
        virtual_stages=lay.virtual_stages,
        zero_stage=lay.zero_stage,
        ep=lay.ep,
        shard_gpus=lay.shard_gpus,
    )


def _offloaded_bytes(m: ModelArch, ask: TrainingAsk, lay: TrainingLayout) -> float:
    """Activation offloading: one micro-batch's activations on one GPU of the layout, as the memory model keeps them."""
    at = dict(tp=lay.tp, pp=lay.pp, cp=lay.cp, gpus=lay.gpus, virtual_stages=lay.virtual_stages)
    req = memory_request(ask, lay.micro_batch, recompute=lay.recompute or ask.training.recompute, **at)
    return micro_batch_activation_bytes(m, req)


@lru_cache(maxsize=16384)
def _step(m: ModelArch, gpu: GPU, lay: StepLayout) -> TrainingStep:
    """The step model's answer, kept across searches (all three frozen): a change of tokens, deadline or prices
    re-times nothing."""
    return training_step(m, gpu, lay)


def run_mfu(m: ModelArch, ask: TrainingAsk, gpu: GPU, o: Offer | None, lay: TrainingLayout, work: TrainingWork):
    """(MFU, the predicted step or None when the user set the MFU)."""
    if work.mfu is not None:
        return work.mfu, None
    net = (o.machine_gpus, o.inter_node_gbit_s) if o is not None else None
    key = (gpu.gpu, net, lay.tp, lay.pp, lay.gpus, lay.zero_stage, lay.micro_batch, lay.recompute, lay.virtual_stages)
    key += (lay.ep, lay.cp, lay.shard_gpus, lay.schedule)
    if (step := work.steps.get(key)) is None:
        step = work.steps[key] = _step(m, gpu, step_layout(m, ask, o, lay))
    return step.mfu, step


def priced(
    m: ModelArch, o: Offer, gpu: GPU, lay: TrainingLayout, work: TrainingWork, ask: TrainingAsk
) -> TrainingCandidate:
    """One offer running the job on the layout's GPUs: its GPU-hours, wall time and cost."""
    count = lay.gpus
    peak = gpu.dense_peak_flops("bf16")[0]
    mfu, step = run_mfu(m, ask, gpu, o, lay, work)
    gh = gpu_hours(work.training_flops, peak, mfu)
    wall = gh / count
    late = ask.training.deadline_hours and wall > ask.training.deadline_hours * 1.0001
    rc = run_cost(o, count, wall * SECONDS_PER_HOUR, ask.pricing.spot_restart_overhead, ask.pricing.hours_per_month)
    how = "predicted for this layout" if step is not None else "as you set it"
    rec = lay.recompute or ask.training.recompute
    extra = f", interleaved 1F1B x{lay.virtual_stages}" if lay.virtual_stages > 1 else ""
    extra += ", zero-bubble ZB-H1" if lay.schedule == "zb-h1" and lay.pp > 1 else ""
    extra += f", EP {lay.ep}" if lay.ep > 1 else ""
    extra += f", CP {lay.cp}" if lay.cp > 1 else ""
    extra += f", HSDP groups of {lay.shard_gpus}" if lay.shard_gpus else ""
    why = [
        f"{counted(count, 'GPU')} (ZeRO-{lay.zero_stage}, TP {lay.tp}, PP {lay.pp}{extra}, "
        f"micro-batch {lay.micro_batch}, recompute {rec}), "
        f"{figure(gh, 4)} GPU-hours at MFU {mfu:.2f} ({how}) of {peak / 1e12:,.0f} TFLOP/s dense BF16",
        f"+{ask.training.overhead_factor:.0%} for failed runs and sweeps",
        *rc.notes,
        *lay.notes,
    ]
    if step is not None and step.paging_s:
        why.append(
            f"paged optimizer: {step.paging_s:,.2f} s of each {step.step_s:,.2f} s step pages the optimizer states "
            "that do not fit beside the rest over PCIe (more GPUs or a higher ZeRO stage, where they fit, page none)"
        )
    prec = ask.training.precision
    if step is not None and prec in ("fp8", "mxfp8", "nvfp4") and not low_precision_runs(gpu, prec):
        why.append(f"the {gpu.label} has no {prec.upper()} tensor cores: the recipe's matmuls run at BF16 speed")
    band = {}
    if step is not None:
        b = training_band(moe=step.moe)
        band = dict(mfu_low=mfu * (1 - b), mfu_high=mfu * (1 + b), tokens_per_s_per_gpu=step.tokens_per_s_per_gpu)
    return TrainingCandidate.renting(
        o,
        offer=o,
        gpu=gpu.gpu,
        weights_format=ask.formats.weights_format,
        gpus=count,
        nodes=machines_of(o, count),
        tp=lay.tp,
        pp=lay.pp,
        zero_stage=lay.zero_stage,
        monthly_usd=None,
        run_cost_usd=rc.run_cost_usd * (1 + ask.training.overhead_factor),
        wall_hours=wall,
        gpu_hours=gh,
        replicas=count // (lay.tp * lay.pp * lay.cp),
        misses=[f"{wall:,.0f} h > deadline {ask.training.deadline_hours:,.0f} h"] if late else [],
        why=why,
        count_reason=lay.reason,
        mfu=mfu,
        mfu_predicted=step is not None,
        step=step,
        micro_batch=lay.micro_batch,
        virtual_stages=lay.virtual_stages,
        pipeline_schedule=lay.schedule if lay.pp > 1 else None,
        ep=lay.ep,
        cp=lay.cp,
        shard_gpus=lay.shard_gpus if lay.zero_stage == 3 else None,
        **band,
        recompute=rec,
    )


def training_message(
    scenario: Scenario | TrainingAsk, missed: list[TrainingCandidate], rejected: list[Rejection]
) -> str:
    """Why nothing qualifies: the count set cannot run (the reasons, the most common first, and what the nearest
    count that runs would cost), the deadline set cannot be met, or the job fits no layout (memory)."""
    ask = TrainingAsk.of(scenario)
    alts = sorted((c for c in missed if c.alternative_to), key=lambda c: c.rank_cost)
    common = [r for r, _ in Counter(r.reason for r in rejected).most_common(2)]
    if count_set(ask) and not any(c.alternative_to is None for c in missed):
        why = [r for r, _ in Counter(r.reason for r in rejected if r.offer_id).most_common(2)]
        text = (
            f"{counted(ask.parallelism.gpus, 'GPU')} cannot run this job: "
            + ("; ".join(why) or "no offer rents this GPU")
            + "."
        )
        if alts:
            a = alts[0]
            where = "one machine" if a.nodes == 1 else f"{a.nodes:,} machines"
            text += (
                f" The nearest count that runs: {counted(a.gpus, 'GPU')} on {where} of {a.offer.offer_id}, "
                f"{a.run_cost_usd:,.0f} USD over {a.wall_hours:,.0f} h."
            )
        return text
    late = sorted({x for c in missed if not c.alternative_to for x in c.misses})[:2]
    if ask.training.deadline_hours and late:
        return (
            f"No configuration finishes within the {ask.training.deadline_hours:,.0f} h deadline: "
            + "; ".join(late)
            + ". Allow a later deadline, more GPUs, or offers with a fast network between machines."
        )
    return (
        "No configuration fits: "
        + ("; ".join(common) or "no offer can run it")
        + ". Try a larger GPU, a shorter sequence, full activation checkpointing, "
        + ("a higher ZeRO stage, " if not ask.parallelism.zero_auto and ask.parallelism.zero_stage < 3 else "")
        + "or CPU offload."
    )
