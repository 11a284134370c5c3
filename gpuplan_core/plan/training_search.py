"""The training search: on each offer, every ZeRO stage x tp x pp x micro-batch that holds the job (training_layout.py)
at the count set, or at the count each needs to finish within the deadline (the default deadline without one),
timed by the step model and priced (training.py); the cheapest wins, ties going to the first in order of preference.

What was tried is kept for the why-chain (``TrainingCandidate.tried``, ``search_step``): for each other ZeRO stage
its best layout, what it loses on (the part of the step it spends more on: the pipeline bubble, data-parallel
traffic not hidden, ...), its MFU and how much dearer it is. A stage the user set is kept, and where searching the
stages finds a cheaper run, that run is stated beside it.
"""

from __future__ import annotations

import math

from ..hardware.catalog import GPU, get_gpu
from ..model.arch import ModelArch
from ..perf.training_step import TrainingStep
from ..pricing.billing import gpu_hours
from ..pricing.offers import Offer
from ..results.plan import WhyStep
from ..scenario.scenario import Scenario
from .search import Rejection, layout_label
from .training import TrainingCandidate, TrainingWork, count_set, priced, run_mfu, training_work
from .training_layout import (
    MAX_TRAINING_GPUS,
    RECOMPUTES,
    ShapeGrid,
    TrainingShape,
    cannot_run,
    held_at,
    machines_of,
    nearest_count,
    network_text,
    recomputes,
    runnable,
    zero_stages,
)

_REC = {"none": "no recompute", "selective": "selective recompute", "full": "full recompute"}
PRICED_PER_OFFER = 8  # the planner's count: the layouts priced per offer, the fastest by GPU-hours billed

# the part of a step an alternative spends more on, in words (its key in TrainingStep.parts())
_LOSES_ON = {
    "pipeline bubble": ("no pipeline bubble", "a smaller pipeline bubble"),
    "data-parallel traffic not hidden": ("no data-parallel traffic exposed", "less data-parallel traffic exposed"),
    "tensor- and context-parallel traffic": ("no tensor-parallel traffic", "less tensor-parallel traffic"),
    "matmuls": ("wider matmuls per GPU", "wider matmuls per GPU"),
    "per-layer fixed cost": ("fewer micro-batches", "fewer micro-batches"),
    "optimizer step": ("no optimizer step", "a sharded optimizer step"),
    "attention": ("less attention per GPU", "less attention per GPU"),
    "elementwise ops": ("less elementwise traffic", "less elementwise traffic"),
    "4-bit base dequantised": ("no dequantisation", "less dequantisation per GPU"),
}


def training_candidates(
    m: ModelArch, sc: Scenario, offers: list[Offer]
) -> tuple[list[TrainingCandidate], list[Rejection], dict]:
    """Every GPU type x offer (serverless aside) priced for the run at its cheapest layout; the rejected with their
    reasons; the job's FLOPs, tokens and MFU."""
    work = training_work(m, sc)
    cands: list[TrainingCandidate] = []
    rejected: list[Rejection] = []
    by_gpu: dict[str, list[Offer]] = {}
    for o in offers:
        if not o.is_serverless:
            by_gpu.setdefault(o.gpu, []).append(o)
    grid = ShapeGrid(m, sc)
    free = _freed(sc) if work.mfu is None else {}
    full = ShapeGrid(m, _searched(sc), free.get("zeros"), free.get("recompute")) if free else None
    for gid, gpu_offers in by_gpu.items():
        cands += _search_gpu(m, sc, get_gpu(gid), gpu_offers, work, rejected, grid, full)
    if not count_set(sc):
        _fewest_alternative(sc, cands)
    return cands, rejected, work.summary()


def _fewest_alternative(sc: Scenario, cands: list[TrainingCandidate]) -> None:
    """No count set: where some offers finish within the default deadline, the others are its near misses; each
    candidate grown beyond the fewest GPUs that hold the job states them (on the cheapest offer of its GPU type)."""
    aim = sc.training.default_deadline_hours
    if aim and not sc.training.deadline_hours and any(c.wall_hours <= aim * 1.0001 for c in cands):
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


def _search_gpu(m, sc, gpu, offers, work, rejected, grid, full) -> list[TrainingCandidate]:
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
    search = _at_users_count if count_set(sc) else _at_planners_count
    if not sc.parallelism.zero_auto and not count_set(sc):  # the stage set, else the lowest above that holds it
        shapes = [s for s in shapes if s.zero_stage == shapes[0].zero_stage]
    out = [c for o in offers if (c := search(m, sc, gpu, o, shapes, work, rejected)) is not None]
    mine = [c for c in out if c.alternative_to is None]
    if full is not None and mine:  # what the user fixed, searched: on the cheapest offer of this GPU type
        c = min(mine, key=lambda c: c.run_cost_usd)
        alt = search(m, _searched(sc), gpu, c.offer, full.shapes(gpu), work, [])
        if alt is not None and alt.run_cost_usd < c.run_cost_usd * 0.995 and (line := _cheaper_beside(c, alt, sc)):
            c.why.append(line)
            c.tried.insert(0, line)
    return out


def _freed(sc: Scenario) -> dict:
    """What the user fixed that the search would otherwise choose: the ZeRO stages and recompute policies to try
    beside it, and whether a TP x PP was set (empty: nothing fixed)."""
    out = {}
    if not sc.parallelism.zero_auto:
        out["zeros"] = [0, 1, 2, 3]
    if not sc.training.recompute_auto:
        out["recompute"] = list(RECOMPUTES)
    if sc.parallelism.tp * sc.parallelism.pp > 1:
        out["layout"] = True
    if out:
        out.setdefault("zeros", zero_stages(sc))
        out.setdefault("recompute", recomputes(sc))
    return out


def _searched(sc: Scenario) -> Scenario:
    """The scenario with what the user fixed left to the search: the ZeRO stage, the recompute, TP x PP."""
    return sc.with_(zero_auto=True, recompute_auto=True, tp=1, pp=1)


def _cheaper_beside(c: TrainingCandidate, alt: TrainingCandidate, sc: Scenario) -> str | None:
    """'ZeRO-3 would be 22% cheaper: ZeRO-3, DP 64 on 64 GPUs, MFU 0.34, 119,115 USD; ZeRO-0 is kept as set'
    (None where the cheaper run differs only in what the search chose anyway)."""
    what, kept = [], []
    if not sc.parallelism.zero_auto and alt.zero_stage != c.zero_stage:
        what.append(f"ZeRO-{alt.zero_stage}")
        kept.append(f"ZeRO-{c.zero_stage}")
    if not sc.training.recompute_auto and alt.recompute != c.recompute:
        what.append(_REC[alt.recompute])
        kept.append(_REC[c.recompute])
    par = sc.parallelism
    if par.tp * par.pp > 1 and (alt.tp, alt.pp) != (c.tp, c.pp):
        what.append(f"TP {alt.tp} x PP {alt.pp}")
        kept.append(f"TP {c.tp} x PP {c.pp}")
    if not what:
        return None
    saved = 1 - alt.run_cost_usd / c.run_cost_usd
    return (
        f"{' with '.join(what)} would be {saved:.0%} cheaper: {alt.label}, micro-batch {alt.micro_batch}, recompute "
        f"{alt.recompute}, on {alt.gpus:,} GPUs, MFU {alt.mfu:.2f}, {alt.run_cost_usd:,.0f} USD; "
        f"{' and '.join(kept)} {'is' if len(kept) == 1 else 'are'} kept as set"
    )


def _best(cands: list[TrainingCandidate], aim: float | None = None) -> TrainingCandidate:
    """The cheapest that meets the deadline (if any does) and finishes within ``aim`` hours (the default deadline,
    if any does), the first in order of preference on a tie."""

    def group(c: TrainingCandidate) -> tuple[bool, bool]:
        return bool(c.misses), bool(aim and c.wall_hours > aim * 1.0001)

    best = min(map(group, cands))
    ok = [c for c in cands if group(c) == best]
    low = min(c.run_cost_usd for c in ok)
    ties = [c for c in ok if c.run_cost_usd <= low * (1 + 1e-6)]  # equal costs: the first in order, or the
    return min(ties, key=lambda c: c.wall_hours) if best[0] else ties[0]  # sooner done where all are late


def _per_gpu_token(step: TrainingStep) -> dict[str, float]:
    return {k: v * step.gpus / step.tokens_per_step for k, v in step.parts().items()}


def _why_over(pick: TrainingCandidate, alt: TrainingCandidate, by: str = "zero") -> str:
    """'ZeRO-3 over ZeRO-0 (TP 2 x PP 2 x DP 16): no pipeline bubble, MFU 0.34 vs 0.26, 22% cheaper' (``by``
    "recompute": 'selective recompute over full (ZeRO-1, DP 64, micro-batch 2): ...')."""
    split = alt.label.split(", ", 1)[1]
    if by == "recompute":
        head = f"{_REC[pick.recompute]} over {_REC[alt.recompute]} ({alt.label}, micro-batch {alt.micro_batch})"
    else:
        head = f"ZeRO-{pick.zero_stage} over ZeRO-{alt.zero_stage} ({split}, micro-batch {alt.micro_batch})"
    if alt.misses and not pick.misses:
        return f"{head}: it misses the deadline ({alt.misses[0]})"
    parts = []
    if pick.step is not None and alt.step is not None:
        a, p = _per_gpu_token(alt.step), _per_gpu_token(pick.step)
        part = max(a, key=lambda k: a[k] - p.get(k, 0.0))
        if a[part] > p.get(part, 0.0):
            none, less = _LOSES_ON.get(part, (f"less {part}", f"less {part}"))
            parts.append(none if p.get(part, 0.0) <= 0 else less)
        parts.append(f"MFU {pick.mfu:.2f} vs {alt.mfu:.2f}")
    dearer = alt.run_cost_usd / pick.run_cost_usd - 1
    parts.append(f"{1 - pick.run_cost_usd / alt.run_cost_usd:.0%} cheaper" if dearer > 0.005 else "as cheap")
    return f"{head}: " + ", ".join(parts)


def _tried(pick: TrainingCandidate, cands: list[TrainingCandidate], stages: list[int], sc: Scenario) -> list[str]:
    out, same = [], []
    for z in stages:
        if z == pick.zero_stage:
            continue
        mine = [c for c in cands if c.zero_stage == z]
        if not mine:
            if sc.parallelism.zero_auto:
                out.append(f"ZeRO-{z}: no layout holds the job here")
            continue
        alt = _best(mine)
        if not alt.misses and alt.run_cost_usd <= pick.run_cost_usd * 1.005:
            same.append(f"ZeRO-{z}")
        else:
            out.append(_why_over(pick, alt))
    if same:
        out.append(f"{', '.join(same)}: within 0.5% of ZeRO-{pick.zero_stage}'s cost here")
    if sc.training.recompute_auto:
        for r in RECOMPUTES:
            mine = [c for c in cands if c.recompute == r]
            if r == pick.recompute:
                continue
            if not mine:
                out.append(f"{_REC[r]}: no layout holds the job here")
                continue
            out.append(_why_over(pick, _best(mine), "recompute"))
    asked = sc.request.batch_or_one
    if pick.micro_batch < asked:
        out.append(f"micro-batch {pick.micro_batch}, not the {asked} given: the largest that fits this layout")
    return out


def _finish(pick: TrainingCandidate, cands: list[TrainingCandidate], sc: Scenario) -> TrainingCandidate:
    stages = sorted({c.zero_stage for c in cands} | ({0, 1, 2, 3} if sc.parallelism.zero_auto else set()))
    pick.tried = _tried(pick, cands, stages, sc)
    pick.why += pick.tried
    return pick


# ---- the planner's count --------------------------------------------------------------------------------


def _grown(m: ModelArch, sc: Scenario, gpu: GPU, o: Offer, s: TrainingShape, work: TrainingWork, aim: float) -> int:
    """The count, in steps of the shape's tp x pp x cp, at which the run finishes within ``aim`` hours."""
    key = ("grown", gpu.gpu, o.machine_gpus, o.inter_node_gbit_s, s, aim)
    if (known := work.steps.get(key)) is not None:
        return known
    peak = gpu.dense_peak_flops("bf16")[0]
    step, need = s.per_copy, s.fewest_gpus
    for _ in range(3):  # the MFU at the count needed, which changes the count a little
        mfu, _ = run_mfu(m, sc, gpu, o, s.layout(need), work)
        need = max(need, math.ceil(gpu_hours(work.training_flops, peak, mfu) / aim - 1e-9))
        need = min(math.ceil(need / step) * step, MAX_TRAINING_GPUS // step * step)
    work.steps[key] = need
    return need


def _estimate(m, sc, gpu, o, s: TrainingShape, n: int, work: TrainingWork) -> float:
    """GPU-hours billed, roughly (whole machines), to rank the layouts before pricing the best of them."""
    mfu, _ = run_mfu(m, sc, gpu, o, s.layout(n), work)
    billed = max(n, machines_of(o, n) * o.machine_gpus) if o.machine_gpus > 1 else n
    return billed / n / mfu


def _within(m, sc, gpu, o, shapes: list[TrainingShape], n: int, work: TrainingWork, aim: float) -> bool:
    """Whether some shape finishes on ``n`` GPUs within ``aim`` hours (then no count need grow)."""
    peak = gpu.dense_peak_flops("bf16")[0]
    for s in shapes:
        mfu, _ = run_mfu(m, sc, gpu, o, s.layout(n), work)
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


def _at_planners_count(m, sc, gpu, o, shapes, work, rejected) -> TrainingCandidate | None:
    """No count set: per shape, the fewest GPUs that hold it, grown to finish within the deadline (or the default
    deadline); across machines only over a fast network. Offers of the same machine and network rank the same
    layouts (``_ranked``, computed once for them); each prices the best of them on its own bill."""
    key = ("ranked", gpu.gpu, _machine(o), tuple(shapes))
    if not SHARE_ACROSS_OFFERS or (ranked := work.steps.get(key)) is None:
        ranked = work.steps[key] = _ranked(m, sc, gpu, o, shapes, work)
    if isinstance(ranked, str):
        what = layout_label(gpu.gpu, shapes[0].tp, shapes[0].pp) if ranked != "network" else None
        reason = o.layout_problem(shapes[0].tp, 1) if ranked != "network" else None
        if ranked == "network":
            need = min(s.fewest_gpus for s in runnable(shapes, o))
            reason = (
                f"needs {need} GPUs across machines: a coupled job needs a fast RDMA "
                f"network; this offer has {network_text(o)}"
            )
        rejected.append(Rejection(gpu.gpu, reason, sc.formats.weights_format, o.offer_id, *([what] if what else [])))
        return None
    entries, chosen, first_fewest, aim = ranked
    cands, smallest = [], None
    for i in chosen:
        s, n, why = entries[i]
        c = priced(m, o, gpu, s.layout(n, why), work, sc)
        cands.append(c)
        if i == first_fewest:
            smallest = c
    deadline = sc.training.deadline_hours
    pick = _finish(_best(cands, aim), cands, sc)
    if not sc.parallelism.zero_auto and pick.zero_stage != sc.parallelism.zero_stage:
        pick.why.append(
            f"ZeRO-{pick.zero_stage}: at ZeRO-{sc.parallelism.zero_stage} the model states do not fit this GPU"
        )
    pick.fewest = smallest if smallest is not None and pick.gpus > smallest.gpus else None
    if aim and pick.wall_hours > aim * 1.0001 and not deadline:
        pick.why.append(
            f"takes {pick.wall_hours:,.0f} h, beyond the {aim:,.0f} h a run is usually given: this offer cannot "
            "couple enough GPUs"
        )
    return pick


def _ranked(m, sc, gpu, o, shapes, work):
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
    deadline = sc.training.deadline_hours
    aim = deadline or sc.training.default_deadline_hours
    fewest = min(s.fewest_gpus for s in local)
    entries = []
    at_fewest = [s for s in local if s.holds(fewest)]
    if not aim or _within(m, sc, gpu, o, at_fewest, fewest, work, aim):
        local, aim = at_fewest, None  # the fewest GPUs that hold the job (in time), at the cheapest layout of them
    for s in local:
        counts = {
            (fewest if not aim else s.fewest_gpus): "no count set (1, the default): the smallest that holds the job"
        }
        if aim:
            n = _grown(m, sc, gpu, o, s, work, aim)
            what = f"the {aim:,.0f} h deadline" if deadline else f"{aim:,.0f} h (the default deadline, 30 days)"
            why = f"no count set: grown in steps of {s.per_copy} to finish within {what}"
            if n > o.machine_gpus and not o.fast_network:
                n = o.machine_gpus // s.per_copy * s.per_copy
                why = "no count set: the most one machine holds, the offer having no fast network between machines"
            if n > o.machine_gpus:  # whole machines: the GPUs billed anyway, run shorter
                whole = math.lcm(s.per_copy, o.machine_gpus)
                if (w := math.ceil(n / whole) * whole) <= MAX_TRAINING_GPUS:
                    counts.setdefault(w, why + ", to whole machines")
            counts.setdefault(n, why)
        entries += [(s, n, why) for n, why in counts.items() if s.holds(n)]
    ranked = sorted(range(len(entries)), key=lambda i: _estimate(m, sc, gpu, o, *entries[i][:2], work))
    first_fewest = next(i for i, e in enumerate(entries) if e[1] == fewest)
    per_stage = {}  # the fastest of each ZeRO stage and recompute policy, for the why-chain's comparison
    for i in ranked:
        per_stage.setdefault(entries[i][0].zero_stage, i)
        per_stage.setdefault(entries[i][0].recompute, i)
    chosen = sorted({*ranked[:PRICED_PER_OFFER], first_fewest, *per_stage.values()})
    return entries, chosen, first_fewest, aim


# ---- a count set ----------------------------------------------------------------------------------------


def _at_users_count(m, sc, gpu, o, shapes, work, rejected) -> TrainingCandidate | None:
    """A count set: exactly that many GPUs at the cheapest layout that holds it, or the reason it cannot run and the
    nearest count that does."""
    n, par = sc.parallelism.gpus, sc.parallelism
    problem = cannot_run(shapes, n, o, gpu, sc)
    reason = "the count you set (a count above the default of 1 is used as it is)"
    if problem is None:
        cands = [priced(m, o, gpu, s.layout(n, reason), work, sc) for s in held_at(shapes, n, o, sc)]
        pick = _best(cands)
        if not par.zero_auto and pick.zero_stage != par.zero_stage:
            pick.why.append(f"ZeRO-{pick.zero_stage}: at ZeRO-{par.zero_stage} the job does not fit {n:,} GPUs")
        if (pick.tp, pick.pp) != (par.tp, par.pp) and par.tp * par.pp > 1:
            pick.why.append(f"TP {pick.tp}, PP {pick.pp}: at your TP {par.tp}, PP {par.pp} it does not fit {n:,} GPUs")
        aim = sc.training.default_deadline_hours
        if aim and not sc.training.deadline_hours and pick.wall_hours > aim * 1.0001:
            pick.why.append(
                f"takes {pick.wall_hours:,.0f} h on {n:,} GPUs, beyond the {aim:,.0f} h a run is usually "
                "given: more GPUs finish sooner at about the same cost"
            )
        return _finish(pick, cands, sc)
    rejected.append(Rejection(gpu.gpu, problem, sc.formats.weights_format, o.offer_id))
    near, alts = nearest_count(shapes, n, o, sc)
    if not alts:
        return None
    why = f"the nearest count that runs on this offer, not the {n:,} you set"
    c = _best([priced(m, o, gpu, s.layout(near, why), work, sc) for s in alts])
    c.misses.insert(0, f"{c.gpus:,} GPUs, not the {n:,} you set: {problem}")
    c.alternative_to = n
    return c


def search_step(c: TrainingCandidate) -> WhyStep | None:
    """The why-chain's step naming what the search tried and why the pick won (None: nothing else was tried)."""
    if not c.tried:
        return None
    return WhyStep(label="Layout searched", value=c.label, detail="; ".join(c.tried))
