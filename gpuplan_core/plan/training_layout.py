"""Training layouts: the tensor x pipeline x data-parallel layouts and ZeRO stages that hold a training job on a
GPU type, and whether (and on how many machines) an offer can run them.

Two questions, one per way the count is chosen (``training.py`` says how "set by the user" is known):
- the planner's count: the smallest layout that holds the job (``training_layout``, ``memory.fit.min_gpus``);
- a count set: every tp x pp that can hold the job with the fewest data-parallel ranks it needs
  (``training_shapes``); a count holds the job where some shape's tp x pp divides it into at least that many
  ranks, the per-GPU bytes being sharded / dp + unsharded (``memory.fit.layout_table``).

An offer runs a coupled job on ceil(GPUs / its GPUs per machine) machines; across machines only over a fast RDMA
network, and tensor parallel only inside one machine (over NVLink above 2).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..hardware.catalog import GPU
from ..memory.budget import memory_budget
from ..memory.fit import budget_bytes, layout_table, min_gpus
from ..memory.request import memory_request
from ..model.arch import ModelArch
from ..pricing.offers import FAST_NETWORK_GBIT_S, Offer
from ..scenario.fields import MAX_LAYOUT_GPUS
from ..scenario.scenario import Scenario

MAX_TRAINING_GPUS = MAX_LAYOUT_GPUS  # the largest count searched for a layout that holds the job


@dataclass
class TrainingLayout:
    tp: int
    pp: int
    gpus: int  # tp x pp x data-parallel ranks
    zero_stage: int
    notes: list[str] = field(default_factory=list)  # what differs from what was asked, and why
    reason: str = ""  # how the count was chosen, for the why-chain


def machines_of(o: Offer, gpus: int) -> int:
    """Machines a coupled job of ``gpus`` takes on this offer: as many as its GPUs per machine require."""
    return max(1, math.ceil(gpus / o.machine_gpus - 1e-9))


def network_text(o: Offer) -> str:
    """The offer's network between machines, in words: 'EFA at 3,200 Gbit/s', 'InfiniBand of unstated speed'."""
    net, gbit = o.inter_node_network, o.inter_node_gbit_s
    if net in ("unknown", "none"):
        return "no stated network"
    return f"{net} at {gbit:,.{0 if gbit >= 1 else 1}f} Gbit/s" if gbit else f"{net} of unstated speed"


# ---- the layout: planner's count (smallest that holds the job) -------------------------------------------


def training_layout(m: ModelArch, sc: Scenario, gpu: GPU) -> TrainingLayout | None:
    """The smallest layout that holds the job at the chosen ZeRO stage, else at the lowest stage above it."""
    for zero in range(sc.parallelism.zero_stage, 4):
        s = sc.with_(zero_stage=zero)
        req = memory_request(s)
        cap = gpu.vram_usable_bytes * req.assumptions.memory_utilization
        try:
            if memory_budget(m, req).per_gpu_bytes <= cap:
                lay = TrainingLayout(sc.parallelism.tp, sc.parallelism.pp, sc.parallelism.gpus, zero)
            else:
                found = min_gpus(m, req, gpu)
                lay = None if found is None else TrainingLayout(found.tp, found.pp, found.gpus, zero)
        except ValueError:
            lay = None
        if lay is not None:
            if zero != sc.parallelism.zero_stage:
                lay.notes.append(
                    f"ZeRO-{zero}: at ZeRO-{sc.parallelism.zero_stage} the model states do not fit this GPU"
                )
            return lay
    return None


# ---- the layout: a count set by the user -------------------------------------------------------------------


@dataclass(frozen=True)
class TrainingShape:
    """A tp x pp at a ZeRO stage, and the fewest data-parallel ranks at which it fits one GPU of a type."""

    zero_stage: int
    tp: int
    pp: int
    dp_min: int
    cp: int = 1  # context parallel: the user's, kept on every shape

    @property
    def per_copy(self) -> int:
        """GPUs of one data-parallel rank: tp x pp x cp."""
        return self.tp * self.pp * self.cp

    def holds(self, gpus: int) -> bool:
        n0 = self.per_copy
        return gpus % n0 == 0 and gpus // n0 >= self.dp_min


def _dp_min(sharded: float, unsharded: float, cap: float) -> int | None:
    """Per GPU = sharded / dp + unsharded (fit.layout_table): the fewest dp that fits ``cap``, None if none does."""
    if sharded <= 0:
        return 1 if unsharded <= cap else None
    if unsharded >= cap:
        return None
    dp = max(1, math.ceil(sharded / (cap - unsharded) * (1 - 1e-12)))
    while sharded / dp + unsharded > cap:  # float guard
        dp += 1
    return dp


def training_shapes(m: ModelArch, sc: Scenario, gpu: GPU) -> list[TrainingShape]:
    """Every tp x pp of the layout grid (and the user's own) that can hold the job on this GPU, at the chosen ZeRO
    stage and each above it, in order of preference: the lower stage, the user's tp x pp, fewer GPUs per copy."""
    out: list[TrainingShape] = []
    for zero in range(sc.parallelism.zero_stage, 4):
        req = memory_request(sc.with_(zero_stage=zero))
        cap = budget_bytes(gpu, req.assumptions)
        rows = layout_table(m, req, MAX_TRAINING_GPUS)
        if all((tp, pp) != (sc.parallelism.tp, sc.parallelism.pp) for _, tp, pp, _, _ in rows):
            try:  # the user's own tp x pp, off the grid: its bytes at dp 1 and 2 give the split
                own = sc.parallelism.tp * sc.parallelism.pp * sc.parallelism.cp
                b1, b2 = (memory_budget(m, req.model_copy(update={"gpus": k * own})).per_gpu_bytes
                          for k in (1, 2))  # fmt: skip
                sharded = 2 * (b1 - b2) if zero else 0.0
                rows.append((own, sc.parallelism.tp, sc.parallelism.pp, sharded, b1 - sharded))
            except ValueError:
                pass
        shapes = [
            TrainingShape(zero, tp, pp, dp, sc.parallelism.cp)
            for _, tp, pp, sh, un in rows
            if (dp := _dp_min(sh, un, cap)) is not None
        ]
        out += sorted(shapes, key=lambda s: ((s.tp, s.pp) != (sc.parallelism.tp, sc.parallelism.pp), s.tp * s.pp))
    return out


def layout_at(shapes: list[TrainingShape], gpus: int, o: Offer) -> TrainingLayout | None:
    """The preferred shape that holds the job on exactly ``gpus`` GPUs with a tensor parallel this offer allows."""
    for s in shapes:
        if s.holds(gpus) and o.layout_problem(s.tp, 1) is None:
            return TrainingLayout(s.tp, s.pp, gpus, s.zero_stage)
    return None


def layouts_at(shapes: list[TrainingShape], gpus: int, o: Offer) -> list[TrainingLayout]:
    """Every shape that holds the job on exactly ``gpus`` GPUs on this offer, at the lowest ZeRO stage that does,
    in order of preference (the planner then picks the fastest, training.py)."""
    held = [s for s in shapes if s.holds(gpus) and o.layout_problem(s.tp, 1) is None]
    if not held:
        return []
    stage = held[0].zero_stage
    return [TrainingLayout(s.tp, s.pp, gpus, s.zero_stage) for s in held if s.zero_stage == stage]


def cannot_run(shapes: list[TrainingShape], gpus: int, o: Offer, gpu: GPU, zero_stage: int) -> str | None:
    """Why ``gpus`` GPUs of this offer cannot run the job (None: they can)."""
    if gpus > o.machine_gpus and not o.fast_network:
        return (
            f"{gpus:,} GPUs take {machines_of(o, gpus):,} machines of {o.machine_gpus} here, and a job coupled across "
            f"machines needs a fast RDMA network (InfiniBand, RoCE or EFA, {FAST_NETWORK_GBIT_S:,.0f} Gbit/s or "
            f"more); this offer has {network_text(o)}"
        )
    if layout_at(shapes, gpus, o) is not None:
        return None
    held = next((s for s in shapes if s.holds(gpus)), None)
    if held is not None:  # the memory allows it, the machine does not
        return f"{gpus:,} x {gpu.label} hold the job only at tensor parallel {held.tp}: {o.layout_problem(held.tp, 1)}"
    return (
        f"{gpus:,} x {gpu.label} cannot hold the job: no tensor x pipeline x data-parallel layout of {gpus:,} GPUs "
        f"fits their memory at ZeRO-{zero_stage}" + (" or any stage above" if zero_stage < 3 else "")
    )


def nearest_count(shapes: list[TrainingShape], gpus: int, o: Offer) -> TrainingLayout | None:
    """The count nearest ``gpus`` that runs on this offer (the larger on a tie), None when none up to the cap does.
    A shape holds the multiples of tp x pp from tp x pp x its fewest data-parallel ranks up: the nearest below and
    above of each shape the offer allows are the only counts to compare."""
    hi = MAX_TRAINING_GPUS if o.fast_network else min(o.machine_gpus, MAX_TRAINING_GPUS)
    near: set[int] = set()
    for s in shapes:
        if o.layout_problem(s.tp, 1):
            continue
        n0 = s.per_copy
        lo = n0 * s.dp_min
        below = min(gpus - 1, hi) // n0 * n0
        above = max(lo, (gpus // n0 + 1) * n0)
        near |= {n for n in (below, above) if lo <= n <= hi}
    if not near:
        return None
    return layout_at(shapes, min(near, key=lambda n: (abs(n - gpus), -n)), o)
