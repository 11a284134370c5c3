"""Training layouts: the ZeRO stages x tensor x pipeline x data-parallel layouts x micro-batches that hold a training
job on a GPU type, and whether (and on how many machines) an offer can run them.

The memory side of the search (training.py prices each layout with the step model):
- ``ShapeGrid``: per ZeRO stage and micro-batch, each tp x pp of the layout grid (and the user's own) with its
  per-GPU bytes split into sharded / dp + unsharded (``memory.fit.layout_table``), GPU-independent, computed once;
- ``TrainingShape``: one of them on one GPU type, with the fewest data-parallel ranks at which it fits; a count
  holds the job where the shape's tp x pp x cp divides it into at least that many ranks.

The stages tried: 0-3 when the ZeRO stage is searched (``zero_auto``); a stage the user set, and the lowest above
it only where it fits nowhere. The micro-batches tried: the one given and each half of it down to 1 (the search
keeps the largest that fits where it is the cheaper, and says so). The pipeline schedules tried (``virtual_stages``
None): 1F1B and Megatron's interleaved 1F1B with 2 and 4 model chunks per stage, on pipelines whose layers divide
into pp x v chunks and at counts whose micro-batches per step divide by pp (Megatron-Core's interleaved schedule
requires both). Expert parallel (a mixture of experts, ``ep`` None): 1, 2, 4 and 8 where they divide the experts,
inside one machine's NVLink; EP borrows its GPUs from the data-parallel group, so a count holds the shape where ep
divides its data-parallel ranks. Context parallel (ring attention), for sequences of 32,768 tokens or more with none
set: 1, 2 and 4 (a cp above 1 is the user's, kept).

An offer runs a coupled job on ceil(GPUs / its GPUs per machine) machines; across machines only over a fast RDMA
network, and tensor parallel only inside one machine (over NVLink above 2).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

from ..hardware.catalog import GPU
from ..memory.budget import memory_budget
from ..memory.components import MemoryRequest
from ..memory.fit import budget_bytes, layout_table
from ..memory.request import memory_request
from ..model.arch import ModelArch
from ..pricing.offers import FAST_NETWORK_GBIT_S, Offer
from ..scenario.fields import MAX_LAYOUT_GPUS
from .training_ask import TrainingAsk
from .training_options import (
    PIPELINE_DEPTHS_TRIED,
    PIPELINE_SCHEDULES,
    PRE_TRAINING_GLOBAL_BATCH_TOKENS,
    RECOMPUTES,
    cp_options,
    ep_options,
    micro_batches,
    recomputes,
    schedule_options,
    shard_options,
    virtual_stage_options,
    zero_stages,
)

MAX_TRAINING_GPUS = MAX_LAYOUT_GPUS  # the largest count searched for a layout that holds the job


@dataclass
class TrainingLayout:
    tp: int
    pp: int
    gpus: int  # tp x pp x cp x data-parallel ranks
    zero_stage: int
    notes: list[str] = field(default_factory=list)  # what differs from what was asked, and why
    reason: str = ""  # how the count was chosen, for the why-chain
    micro_batch: int = 1  # sequences per GPU per micro-batch
    recompute: str = ""  # activation checkpointing as searched ("": the scenario's)
    virtual_stages: int = 1  # model chunks per pipeline stage (1: 1F1B; more: interleaved 1F1B)
    ep: int = 1  # expert parallel, within the data-parallel group
    schedule: str = "1f1b"  # the pipeline schedule: 1f1b (interleaved where virtual_stages > 1) or zb-h1
    cp: int = 1  # context parallel: each sequence split over this many GPUs (ring attention)
    shard_gpus: int = 0  # ZeRO-3 hybrid sharding (HSDP): data-parallel ranks per shard group (0: all of them)


def machines_of(o: Offer, gpus: int) -> int:
    """Machines a coupled job of ``gpus`` takes on this offer: as many as its GPUs per machine require."""
    return max(1, math.ceil(gpus / o.machine_gpus - 1e-9))


def network_text(o: Offer) -> str:
    """The offer's network between machines, in words: 'EFA at 3,200 Gbit/s', 'InfiniBand of unstated speed'."""
    net, gbit = o.inter_node_network, o.inter_node_gbit_s
    if net in ("unknown", "none"):
        return "no stated network"
    return f"{net} at {gbit:,.{0 if gbit >= 1 else 1}f} Gbit/s" if gbit else f"{net} of unstated speed"


@dataclass(frozen=True)
class TrainingShape:
    """A tp x pp at a ZeRO stage and micro-batch, and the fewest data-parallel ranks at which it fits one GPU."""

    zero_stage: int
    tp: int
    pp: int
    dp_min: int
    cp: int = 1  # context parallel: the user's, or searched for long sequences (cp_options)
    micro_batch: int = 1
    recompute: str = "full"  # activation checkpointing
    virtual_stages: int = 1  # interleaved 1F1B's model chunks per stage (1: 1F1B)
    ep: int = 1  # expert parallel: dp_min is a multiple of it
    batch_tokens: float = 0.0  # pre-training's tokens per step (0: fine-tuning, 4 x pp micro-batches a step)
    seq_len: int = 4096
    shard_gpus: int = 0  # HSDP at ZeRO-3: data-parallel ranks per shard group (0: all); dp_min a multiple of it
    schedule: str = "1f1b"  # the pipeline schedule (pp > 1): 1f1b or zb-h1 (zero bubble, as 1F1B's memory)

    @property
    def key(self) -> tuple:
        """ZeRO stage, tp, pp, recompute, schedule, EP, CP, HSDP: the shape but its micro-batch and data-parallel
        ranks."""
        v, sched = self.virtual_stages, self.schedule
        return self.zero_stage, self.tp, self.pp, self.recompute, v, self.ep, self.cp, self.shard_gpus, sched

    @property
    def per_copy(self) -> int:
        """GPUs of one data-parallel rank: tp x pp x cp."""
        return self.tp * self.pp * self.cp

    @property
    def count_step(self) -> int:
        """The step between the counts that hold the shape: tp x pp x cp x ep (EP divides the data-parallel ranks;
        so does an HSDP group)."""
        return self.per_copy * math.lcm(self.ep, self.shard_gpus or 1)

    @property
    def fewest_gpus(self) -> int:
        return self.per_copy * self.dp_min

    def holds(self, gpus: int) -> bool:
        n0 = self.count_step
        return gpus % n0 == 0 and gpus // self.per_copy >= self.dp_min and self.schedule_runs(gpus // self.per_copy)

    def schedule_runs(self, dp: int) -> bool:
        """Interleaved 1F1B runs where the micro-batches per step divide by pp (Megatron-Core's interleaved
        schedule); 1F1B always. Pre-training's micro-batches: the step's tokens / (dp x micro-batch x sequence)."""
        if self.virtual_stages <= 1 or not self.batch_tokens:
            return True
        per_rank = max(self.batch_tokens, self.micro_batch * self.seq_len * dp) / (dp * self.micro_batch * self.seq_len)
        return max(1, round(per_rank)) % self.pp == 0

    def layout(self, gpus: int, reason: str = "") -> TrainingLayout:
        return TrainingLayout(
            self.tp,
            self.pp,
            gpus,
            self.zero_stage,
            reason=reason,
            micro_batch=self.micro_batch,
            recompute=self.recompute,
            virtual_stages=self.virtual_stages,
            ep=self.ep,
            cp=self.cp,
            shard_gpus=self.shard_gpus,
            schedule=self.schedule,
        )


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


def _fewest_ranks(sharded: float, unsharded: float, cap: float, ep: int, group: int, searched: bool) -> int | None:
    """The fewest data-parallel ranks (a multiple of ep) at which the shape fits ``cap``; HSDP over ``group``
    ranks holds sharded / group + unsharded at any multiple of lcm(group, ep), two groups at least when searched
    (one group is plain ZeRO-3)."""
    if not group:
        dp = _dp_min(sharded, unsharded, cap)
        return None if dp is None else math.ceil(dp / ep) * ep
    if sharded / group + unsharded > cap:
        return None
    return math.lcm(group, ep) * (2 if searched else 1)


_SHAPES: dict[tuple, dict[str, list[TrainingShape]]] = {}  # per grid (its model and memory questions): shapes by GPU


class ShapeGrid:
    """The job's per-GPU bytes for every ZeRO stage x recompute x micro-batch x schedule x EP x tp x pp tried
    (GPU-independent), and the shapes that fit one GPU type, in order of preference: the lower stage, the recompute
    set (then the faster), the user's tp x pp, the larger micro-batch (the one given first), fewer GPUs per copy, 1F1B
    before interleaving, less expert parallel."""

    def __init__(
        self, m: ModelArch, ask: TrainingAsk, zeros: list[int] | None = None, recompute: list[str] | None = None
    ) -> None:
        self.m, self.ask = m, ask
        self.zeros = zeros if zeros is not None else zero_stages(ask)
        self.recomputes = recompute if recompute is not None else recomputes(ask)
        self.rows: list[tuple[int, str, int, int, int, int, MemoryRequest, tuple]] = []
        interleaved, par = virtual_stage_options(m, ask), ask.parallelism
        for zero in self.zeros:
            for rec in self.recomputes:
                for b in micro_batches(ask):
                    for c in cp_options(ask):
                        for e in ep_options(m, ask):
                            for v in (1, *interleaved):
                                fields = dict(
                                    zero_stage=zero, recompute=rec, virtual_stages=v, ep=e, cp=c, shard_gpus=None
                                )
                                fields["gpus"] = (
                                    par.gpus if par.gpus % (par.tp * par.pp * c) == 0 else par.tp * par.pp * c
                                )
                                req = memory_request(ask.with_(**fields), batch=b)
                                self.rows.append((zero, rec, b, v, e, c, req, self._table(req, v)))
        par = ask.parallelism
        key = (m, tuple(self.rows), par.tp, par.pp, par.cp, par.shard_gpus, ask.training.recompute)
        self._by_gpu: dict[str, list[TrainingShape]] = _SHAPES.setdefault(key, {})
        if len(_SHAPES) > 64:  # a bounded cache: the oldest grids go first
            _SHAPES.pop(next(iter(_SHAPES)))

    def _table(self, req: MemoryRequest, v: int) -> tuple:
        par = self.ask.parallelism
        pipes = (
            None if v == 1 else tuple(p for p in range(2, self.m.num_layers + 1) if self.m.num_layers % (p * v) == 0)
        )
        rows = list(_layout_table(self.m, req, pipes))
        if v == 1 and all((tp, pp) != (par.tp, par.pp) for _, tp, pp, _, _ in rows):
            try:  # the user's own tp x pp, off the grid: its bytes at dp 1 and 2 give the split
                own = par.tp * par.pp * req.parallelism.cp
                b1, b2 = (memory_budget(self.m, req.model_copy(update={"gpus": k * own})).per_gpu_bytes for k in (1, 2))
                sharded = 2 * (b1 - b2) if req.parallelism.zero_stage else 0.0
                rows.append((own, par.tp, par.pp, sharded, b1 - sharded))
            except ValueError:
                pass
        return tuple(rows)

    def shapes(self, gpu: GPU) -> list[TrainingShape]:
        if gpu.gpu not in self._by_gpu:
            par, out = self.ask.parallelism, []
            pre = PRE_TRAINING_GLOBAL_BATCH_TOKENS if self.ask.job.mode == "training" else 0.0
            for zero, rec, b, v, e, c, req, rows in self.rows:
                cap = budget_bytes(gpu, req.runtime)
                fit = [
                    TrainingShape(zero, tp, pp, dp, c, b, rec, v, e, pre, self.ask.context_tokens, g, sched)
                    for _, tp, pp, sh, un in sorted(rows, key=lambda r: r[2])
                    for g in shard_options(self.ask, zero, tp, c)
                    if (dp := _fewest_ranks(sh, un, cap, e, g, self.ask.parallelism.shard_gpus is None)) is not None
                    for sched in (schedule_options(self.ask, v) if pp > 1 else ("1f1b",))
                ]
                # per tensor parallel (and HSDP group), the PIPELINE_DEPTHS_TRIED fewest stages that fit (more
                # stages only add bubble and traffic to a job those hold), and the user's own
                kept: dict[tuple[int, int], int] = {}
                for sh in fit:
                    k = (sh.tp, sh.shard_gpus, sh.schedule)
                    if (sh.tp, sh.pp) == (par.tp, par.pp) or kept.get(k, 0) < PIPELINE_DEPTHS_TRIED:
                        kept[k] = kept.get(k, 0) + 1
                        out.append(sh)
            mine, own = (par.tp, par.pp), self.ask.training.recompute

            def order(s: TrainingShape) -> tuple:
                rec = (s.recompute != own, RECOMPUTES.index(s.recompute))
                return (
                    s.zero_stage,
                    rec,
                    (s.tp, s.pp) != mine,
                    -s.micro_batch,
                    s.tp * s.pp,
                    s.tp,
                    s.virtual_stages,
                    PIPELINE_SCHEDULES.index(s.schedule),
                    s.ep,
                    s.cp,
                    s.shard_gpus,
                )

            self._by_gpu[gpu.gpu] = sorted(out, key=order)
        return self._by_gpu[gpu.gpu]


def _layout_table(m: ModelArch, req: MemoryRequest, pipelines: tuple[int, ...] | None = None) -> tuple:
    """fit.layout_table up to MAX_TRAINING_GPUS (on these pipeline depths), kept per model and memory question (both
    frozen): an answer's two searches (the plan and its cost table) and the search beside a fixed stage or recompute
    share their rows."""
    return _kept_table(layout_table, m, req, pipelines)


@lru_cache(maxsize=2048)
def _kept_table(table, m: ModelArch, req: MemoryRequest, pipelines: tuple[int, ...] | None = None) -> tuple:
    # keyed on the function too: a stand-in for it is its own
    return tuple(table(m, req, MAX_TRAINING_GPUS) if pipelines is None else table(m, req, MAX_TRAINING_GPUS, pipelines))


def runnable(shapes: list[TrainingShape], o: Offer) -> list[TrainingShape]:
    """The shapes whose tensor parallel this offer allows (inside one machine, over NVLink above 2)."""
    return [s for s in shapes if o.layout_problem(s.tp, 1) is None]


def best_per_shape(shapes: list[TrainingShape], gpus: int) -> list[TrainingShape]:
    """Of the shapes that hold ``gpus``, per ZeRO stage, recompute and tp x pp the largest micro-batch (the first in
    order)."""
    seen: set[tuple] = set()
    out = []
    for s in shapes:
        if s.holds(gpus) and (k := s.key) not in seen:
            seen.add(k)
            out.append(s)
    return out


def held_at(shapes: list[TrainingShape], gpus: int, o: Offer, ask: TrainingAsk) -> list[TrainingShape]:
    """Every shape that holds the job on exactly ``gpus`` GPUs on this offer, each at its largest micro-batch: all
    stages when searched, else the lowest stage that holds it; the user's tp x pp alone where they set one."""
    held = best_per_shape(runnable(shapes, o), gpus)
    if not held:
        return []
    if not ask.parallelism.zero_auto:
        held = [s for s in held if s.zero_stage == held[0].zero_stage]
    par = ask.parallelism
    if par.tp * par.pp > 1 and (own := [s for s in held if (s.tp, s.pp) == (par.tp, par.pp)]):
        held = own
    return held


def cannot_run(shapes: list[TrainingShape], gpus: int, o: Offer, gpu: GPU, ask: TrainingAsk) -> str | None:
    """Why ``gpus`` GPUs of this offer cannot run the job (None: they can)."""
    if gpus > o.machine_gpus and not o.fast_network:
        return (
            f"{gpus:,} GPUs take {machines_of(o, gpus):,} machines of {o.machine_gpus} here, and a job coupled across "
            f"machines needs a fast RDMA network (InfiniBand, RoCE or EFA, {FAST_NETWORK_GBIT_S:,.0f} Gbit/s or "
            f"more); this offer has {network_text(o)}"
        )
    if held_at(shapes, gpus, o, ask):
        return None
    held = next((s for s in shapes if s.holds(gpus)), None)
    if held is not None:  # the memory allows it, the machine does not
        return f"{gpus:,} x {gpu.label} hold the job only at tensor parallel {held.tp}: {o.layout_problem(held.tp, 1)}"
    zero = ask.parallelism.zero_stage
    stages = (
        "any ZeRO stage" if ask.parallelism.zero_auto else f"ZeRO-{zero}" + (" or any stage above" if zero < 3 else "")
    )
    return (
        f"{gpus:,} x {gpu.label} cannot hold the job: no tensor x pipeline x data-parallel layout of {gpus:,} GPUs "
        f"fits their memory at {stages}, even at micro-batch 1"
    )


def nearest_count(
    shapes: list[TrainingShape], gpus: int, o: Offer, ask: TrainingAsk
) -> tuple[int, list[TrainingShape]]:
    """The count nearest ``gpus`` that runs on this offer (the larger on a tie) and the shapes that hold it; (0, [])
    when none up to the cap does. A shape holds the multiples of its tp x pp x cp from its fewest GPUs up: the
    nearest below and above of each shape the offer allows are the only counts to compare."""
    hi = MAX_TRAINING_GPUS if o.fast_network else min(o.machine_gpus, MAX_TRAINING_GPUS)
    near: set[int] = set()
    for s in runnable(shapes, o):
        n0, lo = s.count_step, s.fewest_gpus
        below = min(gpus - 1, hi) // n0 * n0
        above = max(lo, (gpus // n0 + 1) * n0)
        near |= {n for n in (below, above) if lo <= n <= hi}
    if not near:
        return 0, []
    n = min(near, key=lambda n: (abs(n - gpus), -n))
    return n, held_at(shapes, n, o, ask)
