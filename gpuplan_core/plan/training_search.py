"""The training search: on each offer, every ZeRO stage x tp x pp x pipeline schedule x expert parallel x micro-batch
that holds the job (training_layout.py)
at the count set, or at the count each needs to finish within the deadline (the default deadline without one),
timed by the step model and priced (training.py); the cheapest wins, ties going to the first in order of preference.

What was tried is kept for the why-chain (``TrainingCandidate.tried``, training_tried.py): for each other ZeRO stage
its best layout, what it loses on (the part of the step it spends more on: the pipeline bubble, data-parallel
traffic not hidden, ...), its MFU and how much dearer it is. A stage the user set is kept, and where searching the
stages finds a cheaper run, that run is stated beside it.
"""

from __future__ import annotations

import math

from ..hardware.catalog import GPU, get_gpu
from ..model.arch import ModelArch
from ..pricing.billing import gpu_hours
from ..pricing.offers import Offer
from ..scenario.scenario import Scenario
from .search import Rejection, layout_label
from .training import TrainingCandidate, TrainingWork, count_set, priced, run_mfu, training_work
from .training_ask import TrainingAsk
from .training_layout import (
    MAX_TRAINING_GPUS,
    ShapeGrid,
    TrainingShape,
    cannot_run,
    held_at,
    machines_of,
    nearest_count,
    network_text,
    runnable,
)
from .training_options import RECOMPUTES, recomputes, zero_stages
from .training_tried import best, cheaper_beside, finish

Trained = tuple[list[TrainingCandidate], list[Rejection], dict]  # training_candidates' result

PRICED_PER_OFFER = 8  # the planner's count: the layouts priced per offer, the fastest by GPU-hours billed


def training_candidates(m: ModelArch, scenario: Scenario | TrainingAsk, offers: list[Offer]) -> Trained:
    """Every GPU type x offer (serverless aside) priced for the run at its cheapest layout; the rejected with their
    reasons; the job's FLOPs, tokens and MFU. ``scenario``: the question's TrainingAsk (a Scenario is read as its
    ask)."""
    ask = TrainingAsk.of(scenario)
    work = training_work(m, ask)
    cands: list[TrainingCandidate] = []
    rejected: list[Rejection] = []
    by_gpu: dict[str, list[Offer]] = {}
    for o in offers:
        if not o.is_serverless:
            by_gpu.setdefault(o.gpu, []).append(o)
    grid = ShapeGrid(m, ask)
    free = _freed(ask) if work.mfu is None else {}
    full = ShapeGrid(m, _searched(ask), free.get("zeros"), free.get("recompute")) if free else None
    for gid, gpu_offers in by_gpu.items():
        cands += _search_gpu(m, ask, get_gpu(gid), gpu_offers, work, rejected, grid, full)
    if not count_set(ask):
        _fewest_alternative(ask, cands)
    return cands, rejected, work.summary()


def copied(trained: Trained) -> Trained:
    """A copy of ``training_candidates``' result that its reader may change (the ranking notes misses, the cost rows
    the summary) while another reads the original: one search shared by the recommendation and the cost rows."""
    cands, rejected, summary = trained
    return [c.model_copy(deep=True) for c in cands], list(rejected), dict(summary)


def _fewest_alternative(ask: TrainingAsk, cands: list[TrainingCandidate]) -> None:
    """No count set: where some offers finish within the default deadline, the others are its near misses; each
    candidate grown beyond the fewest GPUs that hold the job states them (on the cheapest offer of its GPU type)."""
    aim = ask.training.default_deadline_hours
    if aim and not ask.training.deadline_hours and any(c.wall_hours <= aim * 1.0001 for c in cands):
        for c in cands:
            if c.wall_hours > aim * 1.0001:
                c.misses.append(f"{c.wall_hours:,.0f} h > the default deadline of {aim:,.0f} h (30 days)")
    by_gpu: dict[str, list[TrainingCandidate]] = {}
    for c in cands:
        by_gpu.setdefault(c.gpu, []).append(c.fewest or c)
    for c in cands:
        if c.fewest is None:
            continue
        few = min(by_gpu[c.gpu], key=lambda f: (f.gpus, f.run_cost_usd))
        what = "one GPU" if few.gpus == 1 else f"{few.gpus:,} GPUs, the fewest that hold it,"
        c.why.append(
            f"the alternative: {what} ({few.offer.offer_id}) would take {few.wall_hours:,.0f} h "
            f"({few.wall_hours / 24:,.0f} days) for {few.run_cost_usd:,.0f} USD"
        )


def _search_gpu(m, ask, gpu, offers, work, rejected, grid, full) -> list[TrainingCandidate]:
    shapes = grid.shapes(gpu)
    if not shapes:
        rejected.append(
            Rejection(
                gpu.gpu,
                f"model states + activations do not fit {gpu.label}s on any layout up to {MAX_TRAINING_GPUS:,} "
                f"GPUs, even at micro-batch 1",
            )
        )
        return []
    search = _at_users_count if count_set(ask) else _at_planners_count
    if not ask.parallelism.zero_auto and not count_set(ask):  # the stage set, else the lowest above that holds it
        shapes = [s for s in shapes if s.zero_stage == shapes[0].zero_stage]
    out = [c for o in offers if (c := search(m, ask, gpu, o, shapes, work, rejected)) is not None]
    mine = [c for c in out if c.alternative_to is None]
    if full is not None and mine:  # what the user fixed, searched: on the cheapest offer of this GPU type
        c = min(mine, key=lambda c: c.run_cost_usd)
        alt = search(m, _searched(ask), gpu, c.offer, full.shapes(gpu), work, [])
        if alt is not None and alt.run_cost_usd < c.run_cost_usd * 0.995 and (line := cheaper_beside(c, alt, ask)):
            c.why.append(line)
            c.tried.insert(0, line)
    return out


def _freed(ask: TrainingAsk) -> dict:
    """What the user fixed that the search would otherwise choose: the ZeRO stages and recompute policies to try
    beside it, and whether a TP x PP, schedule, EP, CP or HSDP group was set (empty: nothing fixed)."""
    out = {}
    if not ask.parallelism.zero_auto:
        out["zeros"] = [0, 1, 2, 3]
    if not ask.training.recompute_auto:
        out["recompute"] = list(RECOMPUTES)
    par = ask.parallelism
    fixed = par.virtual_stages or par.pipeline_schedule or par.ep or par.cp > 1 or par.shard_gpus is not None
    if par.tp * par.pp > 1 or fixed:
        out["layout"] = True
    if out:
        out.setdefault("zeros", zero_stages(ask))
        out.setdefault("recompute", recomputes(ask))
    return out


def _searched(ask: TrainingAsk) -> TrainingAsk:
    """The scenario with what the user fixed left to the search: the ZeRO stage, the recompute, TP x PP, the
    pipeline schedule, expert parallel, context parallel and the HSDP group."""
    return ask.with_(
        zero_auto=True,
        recompute_auto=True,
        tp=1,
        pp=1,
        cp=1,
        virtual_stages=None,
        pipeline_schedule=None,
        ep=None,
        shard_gpus=None,
    )


# ---- the planner's count --------------------------------------------------------------------------------


def _grown(m: ModelArch, ask: TrainingAsk, gpu: GPU, o: Offer, s: TrainingShape, work: TrainingWork, aim: float) -> int:
    """The count, in steps of the shape's tp x pp x cp (x ep), at which the run finishes within ``aim`` hours."""
    key = ("grown", gpu.gpu, o.machine_gpus, o.inter_node_gbit_s, s, aim)
    if (known := work.steps.get(key)) is not None:
        return known
    peak = gpu.dense_peak_flops("bf16")[0]
    step, need = s.count_step, s.fewest_gpus
    for _ in range(3):  # the MFU at the count needed, which changes the count a little
        mfu, _ = run_mfu(m, ask, gpu, o, s.layout(need), work)
        need = max(need, math.ceil(gpu_hours(work.training_flops, peak, mfu) / aim - 1e-9))
        need = min(math.ceil(need / step) * step, MAX_TRAINING_GPUS // step * step)
    work.steps[key] = need
    return need


def _estimate(m, ask, gpu, o, s: TrainingShape, n: int, work: TrainingWork) -> float:
    """GPU-hours billed, roughly (whole machines), to rank the layouts before pricing the best of them."""
    mfu, _ = run_mfu(m, ask, gpu, o, s.layout(n), work)
    billed = max(n, machines_of(o, n) * o.machine_gpus) if o.machine_gpus > 1 else n
    return billed / n / mfu


def _within(m, ask, gpu, o, shapes: list[TrainingShape], n: int, work: TrainingWork, aim: float) -> bool:
    """Whether some shape finishes on ``n`` GPUs within ``aim`` hours (then no count need grow)."""
    peak = gpu.dense_peak_flops("bf16")[0]
    for s in shapes:
        mfu, _ = run_mfu(m, ask, gpu, o, s.layout(n), work)
        if gpu_hours(work.training_flops, peak, mfu) / n <= aim:
            return True
    return False


def _largest_micro_batch(shapes: list[TrainingShape]) -> list[TrainingShape]:
    """Per ZeRO stage and tp x pp, the shape of the largest micro-batch that fits (the first in order)."""
    seen: set[tuple] = set()
    return [s for s in shapes if (k := s.key) not in seen and not seen.add(k)]


SHARE_ACROSS_OFFERS = True  # offers alike in what the step and layout read share one ranking (False: each its own)


def _machine(o: Offer) -> tuple:
    """What the planner's layouts and steps read of an offer (all but its price and billing)."""
    return o.machine_gpus, o.inter_node_gbit_s, o.inter_node_network, o.intra_node_link


def _at_planners_count(m, ask, gpu, o, shapes, work, rejected) -> TrainingCandidate | None:
    """No count set: per shape, the fewest GPUs that hold it, grown to finish within the deadline (or the default
    deadline); across machines only over a fast network. Offers of the same machine and network rank the same
    layouts (``_ranked``, computed once for them); each prices the best of them on its own bill."""
    key = ("ranked", gpu.gpu, _machine(o), tuple(shapes))
    if not SHARE_ACROSS_OFFERS or (ranked := work.steps.get(key)) is None:
        ranked = work.steps[key] = _ranked(m, ask, gpu, o, shapes, work)
    if isinstance(ranked, str):
        what = layout_label(gpu.gpu, shapes[0].tp, shapes[0].pp) if ranked != "network" else None
        reason = o.layout_problem(shapes[0].tp, 1) if ranked != "network" else None
        if ranked == "network":
            need = min(s.fewest_gpus for s in runnable(shapes, o))
            reason = (
                f"needs {need} GPUs across machines: a coupled job needs a fast RDMA "
                f"network; this offer has {network_text(o)}"
            )
        rejected.append(Rejection(gpu.gpu, reason, ask.formats.weights_format, o.offer_id, *([what] if what else [])))
        return None
    entries, chosen, first_fewest, aim = ranked
    cands, smallest = [], None
    for i in chosen:
        s, n, why = entries[i]
        c = priced(m, o, gpu, s.layout(n, why), work, ask)
        cands.append(c)
        if i == first_fewest:
            smallest = c
    deadline = ask.training.deadline_hours
    pick = finish(best(cands, aim), cands, ask)
    if not ask.parallelism.zero_auto and pick.zero_stage != ask.parallelism.zero_stage:
        pick.why.append(
            f"ZeRO-{pick.zero_stage}: at ZeRO-{ask.parallelism.zero_stage} the model states do not fit this GPU"
        )
    pick.fewest = smallest if smallest is not None and pick.gpus > smallest.gpus else None
    if aim and pick.wall_hours > aim * 1.0001 and not deadline:
        pick.why.append(
            f"takes {pick.wall_hours:,.0f} h, beyond the {aim:,.0f} h a run is usually given: this offer cannot "
            "couple enough GPUs"
        )
    return pick


def _ranked(m, ask, gpu, o, shapes, work):
    """The planner's layouts on this offer's machines: (entries (shape, count, why), the indices to price (the
    PRICED_PER_OFFER fastest by GPU-hours billed, the fewest GPUs, the fastest of each ZeRO stage and recompute),
    the index of the fewest, the wall-time aim), or why none runs: "layout" (no tensor parallel it allows),
    "network" (it needs machines it cannot couple)."""
    usable = runnable(shapes, o)
    if not usable:
        return "layout"
    local = _largest_micro_batch([s for s in usable if o.fast_network or s.fewest_gpus <= o.machine_gpus])
    if not local:
        return "network"
    deadline = ask.training.deadline_hours
    aim = deadline or ask.training.default_deadline_hours
    fewest = min(s.fewest_gpus for s in local if s.holds(s.fewest_gpus))
    entries = []
    at_fewest = [s for s in local if s.holds(fewest)]
    if not aim or _within(m, ask, gpu, o, at_fewest, fewest, work, aim):
        local, aim = at_fewest, None  # the fewest GPUs that hold the job (in time), at the cheapest layout of them
    for s in local:
        counts = {
            (fewest if not aim else s.fewest_gpus): "no count set (1, the default): the smallest that holds the job"
        }
        if aim:
            n = _grown(m, ask, gpu, o, s, work, aim)
            what = f"the {aim:,.0f} h deadline" if deadline else f"{aim:,.0f} h (the default deadline, 30 days)"
            why = f"no count set: grown in steps of {s.count_step} to finish within {what}"
            if n > o.machine_gpus and not o.fast_network:
                n = o.machine_gpus // s.count_step * s.count_step
                why = "no count set: the most one machine holds, the offer having no fast network between machines"
            if n > o.machine_gpus:  # whole machines: the GPUs billed anyway, run shorter
                whole = math.lcm(s.count_step, o.machine_gpus)
                if (w := math.ceil(n / whole) * whole) <= MAX_TRAINING_GPUS:
                    counts.setdefault(w, why + ", to whole machines")
            counts.setdefault(n, why)
        entries += [(s, n, why) for n, why in counts.items() if s.holds(n)]
    ranked = sorted(range(len(entries)), key=lambda i: _estimate(m, ask, gpu, o, *entries[i][:2], work))
    first_fewest = next(i for i, e in enumerate(entries) if e[1] == fewest)
    per_stage = {}  # the fastest of each ZeRO stage, recompute, schedule and EP, for the why-chain's comparison
    for i in ranked:
        s = entries[i][0]
        for k in (s.zero_stage, s.recompute, ("v", s.virtual_stages, s.schedule), ("ep", s.ep), ("hsdp", s.shard_gpus)):
            per_stage.setdefault(k, i)
    chosen = sorted({*ranked[:PRICED_PER_OFFER], first_fewest, *per_stage.values()})
    return entries, chosen, first_fewest, aim


# ---- a count set ----------------------------------------------------------------------------------------


def _at_users_count(m, ask, gpu, o, shapes, work, rejected) -> TrainingCandidate | None:
    """A count set: exactly that many GPUs at the cheapest layout that holds it, or the reason it cannot run and the
    nearest count that does."""
    n, par = ask.parallelism.gpus, ask.parallelism
    problem = cannot_run(shapes, n, o, gpu, ask)
    reason = "the count you set (a count above the default of 1 is used as it is)"
    if problem is None:
        cands = [priced(m, o, gpu, s.layout(n, reason), work, ask) for s in held_at(shapes, n, o, ask)]
        pick = best(cands)
        if not par.zero_auto and pick.zero_stage != par.zero_stage:
            pick.why.append(f"ZeRO-{pick.zero_stage}: at ZeRO-{par.zero_stage} the job does not fit {n:,} GPUs")
        if (pick.tp, pick.pp) != (par.tp, par.pp) and par.tp * par.pp > 1:
            pick.why.append(f"TP {pick.tp}, PP {pick.pp}: at your TP {par.tp}, PP {par.pp} it does not fit {n:,} GPUs")
        aim = ask.training.default_deadline_hours
        if aim and not ask.training.deadline_hours and pick.wall_hours > aim * 1.0001:
            pick.why.append(
                f"takes {pick.wall_hours:,.0f} h on {n:,} GPUs, beyond the {aim:,.0f} h a run is usually "
                "given: more GPUs finish sooner at about the same cost"
            )
        return finish(pick, cands, ask)
    rejected.append(Rejection(gpu.gpu, problem, ask.formats.weights_format, o.offer_id))
    near, alts = nearest_count(shapes, n, o, ask)
    if not alts:
        return None
    why = f"the nearest count that runs on this offer, not the {n:,} you set"
    c = best([priced(m, o, gpu, s.layout(near, why), work, ask) for s in alts])
    c.misses.insert(0, f"{c.gpus:,} GPUs, not the {n:,} you set: {problem}")
    c.alternative_to = n
    return c
