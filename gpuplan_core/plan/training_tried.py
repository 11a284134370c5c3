"""What the training search tried and why its pick won, in words: the why-chain's "Layout searched" step (each
stage or recompute the search tried against the pick: "ZeRO-3 over ZeRO-0 (TP 2 x PP 2 x DP 16): no pipeline bubble,
MFU 0.34 vs 0.26, 22% cheaper"), the cheaper run beside a stage or layout the user fixed, and how the search
chooses among its candidates (``best``). The search itself is training_search.py."""

from __future__ import annotations

from ..perf.training_step import TrainingStep
from ..results.plan import WhyStep
from .training import TrainingCandidate
from .training_ask import TrainingAsk
from .training_options import RECOMPUTES

REC = {"none": "no recompute", "selective": "selective recompute", "full": "full recompute"}

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
    "pipeline sends": ("no pipeline sends", "fewer pipeline sends"),
}


def sharding_name(shard_gpus: int | None) -> str:
    """'HSDP groups of 8' / 'ZeRO-3 over all ranks': how ZeRO-3 shards the states."""
    return f"HSDP groups of {shard_gpus}" if shard_gpus else "ZeRO-3 over all ranks"


def schedule_name(v: int | None, schedule: str | None = None) -> str:
    """'1F1B' / 'interleaved 1F1B x2' / 'zero-bubble ZB-H1': the pipeline schedule of ``v`` model chunks per stage."""
    if schedule == "zb-h1":
        return "zero-bubble ZB-H1"
    return "1F1B" if (v or 1) <= 1 else f"interleaved 1F1B x{v}"


def _schedule(c: TrainingCandidate) -> tuple[int, str]:
    return c.virtual_stages or 1, c.pipeline_schedule or "1f1b"


_RECOMPUTED = ("matmuls", "attention", "elementwise ops", "per-layer fixed cost")  # the parts a recompute repeats
_RECOMPUTED_WORDS = ("no forward pass recomputed", "less of the forward pass recomputed")


def cheaper_beside(c: TrainingCandidate, alt: TrainingCandidate, ask: TrainingAsk) -> str | None:
    """'ZeRO-3 would be 22% cheaper: ZeRO-3, DP 64 on 64 GPUs, MFU 0.34, 119,115 USD; ZeRO-0 is kept as set'
    (None where the cheaper run differs only in what the search chose anyway)."""
    what, kept = [], []
    if not ask.parallelism.zero_auto and alt.zero_stage != c.zero_stage:
        what.append(f"ZeRO-{alt.zero_stage}")
        kept.append(f"ZeRO-{c.zero_stage}")
    if not ask.training.recompute_auto and alt.recompute != c.recompute:
        what.append(REC[alt.recompute])
        kept.append(REC[c.recompute])
    par = ask.parallelism
    if par.tp * par.pp > 1 and (alt.tp, alt.pp) != (c.tp, c.pp):
        what.append(f"TP {alt.tp} x PP {alt.pp}")
        kept.append(f"TP {c.tp} x PP {c.pp}")
    sched_set = (par.virtual_stages is not None and alt.virtual_stages != c.virtual_stages) or (
        par.pipeline_schedule is not None and (alt.pipeline_schedule or "1f1b") != (c.pipeline_schedule or "1f1b")
    )
    if sched_set:
        what.append(schedule_name(*_schedule(alt)))
        kept.append(schedule_name(*_schedule(c)))
    if par.cp > 1 and alt.cp != c.cp:
        what.append(f"CP {alt.cp}")
        kept.append(f"CP {c.cp}")
    if par.ep is not None and alt.ep != c.ep:
        what.append(f"EP {alt.ep}")
        kept.append(f"EP {c.ep}")
    if par.shard_gpus is not None and c.zero_stage == 3 and (alt.shard_gpus or 0) != (c.shard_gpus or 0):
        if alt.zero_stage == 3:
            what.append(sharding_name(alt.shard_gpus))
        elif f"ZeRO-{alt.zero_stage}" not in what:
            what.append(f"ZeRO-{alt.zero_stage}")
        kept.append(sharding_name(c.shard_gpus))
    if not what:
        return None
    saved = 1 - alt.run_cost_usd / c.run_cost_usd
    return (
        f"{' with '.join(what)} would be {saved:.0%} cheaper: {alt.label}, micro-batch {alt.micro_batch}, recompute "
        f"{alt.recompute}, on {alt.gpus:,} GPUs, MFU {alt.mfu:.2f}, {alt.run_cost_usd:,.0f} USD; "
        f"{' and '.join(kept)} {'is' if len(kept) == 1 else 'are'} kept as set"
    )


def best(cands: list[TrainingCandidate], aim: float | None = None) -> TrainingCandidate:
    """The cheapest that meets the deadline (if any does) and finishes within ``aim`` hours (the default deadline,
    if any does), the first in order of preference on a tie."""

    def group(c: TrainingCandidate) -> tuple[bool, bool]:
        return bool(c.misses), bool(aim and c.wall_hours > aim * 1.0001)

    top = min(map(group, cands))
    ok = [c for c in cands if group(c) == top]
    low = min(c.run_cost_usd for c in ok)
    ties = [c for c in ok if c.run_cost_usd <= low * (1 + 1e-6)]  # equal costs: the first in order, or the
    return min(ties, key=lambda c: c.wall_hours) if top[0] else ties[0]  # sooner done where all are late


def _per_gpu_token(step: TrainingStep) -> dict[str, float]:
    return {k: v * step.gpus / step.tokens_per_step for k, v in step.parts().items()}


def _why_over(pick: TrainingCandidate, alt: TrainingCandidate, by: str = "zero") -> str:
    """'ZeRO-3 over ZeRO-0 (TP 2 x PP 2 x DP 16): no pipeline bubble, MFU 0.34 vs 0.26, 22% cheaper' (``by``
    "recompute": 'selective recompute over full (ZeRO-1, DP 64, micro-batch 2): ...')."""
    split = alt.label.split(", ", 1)[1]
    if by == "recompute":
        head = f"{REC[pick.recompute]} over {REC[alt.recompute]} ({alt.label}, micro-batch {alt.micro_batch})"
    elif by == "schedule":
        head = (
            f"{schedule_name(*_schedule(pick))} over {schedule_name(*_schedule(alt))} ({alt.label}, "
            f"micro-batch {alt.micro_batch})"
        )
    elif by == "hsdp":
        what = f"{sharding_name(pick.shard_gpus)} over {sharding_name(alt.shard_gpus)}"
        head = f"{what} ({alt.label}, micro-batch {alt.micro_batch})"
    elif by in ("ep", "cp"):
        what = by.upper()
        head = f"{what} {getattr(pick, by)} over {what} {getattr(alt, by)} ({alt.label}, micro-batch {alt.micro_batch})"
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
            if by == "recompute" and part in _RECOMPUTED:  # the alternative's extra time is its recomputed forward
                none = less = _RECOMPUTED_WORDS[RECOMPUTES.index(pick.recompute) > 0]
            if by == "ep" and part == "tensor- and context-parallel traffic":  # the experts' all-to-alls are there
                none, less = "no expert all-to-all", "a smaller expert all-to-all"
            parts.append(none if p.get(part, 0.0) <= 0 else less)
        parts.append(f"MFU {pick.mfu:.2f} vs {alt.mfu:.2f}")
    dearer = alt.run_cost_usd / pick.run_cost_usd - 1
    parts.append(f"{1 - pick.run_cost_usd / alt.run_cost_usd:.0%} cheaper" if dearer > 0.005 else "as cheap")
    return f"{head}: " + ", ".join(parts)


def tried(pick: TrainingCandidate, cands: list[TrainingCandidate], stages: list[int], ask: TrainingAsk) -> list[str]:
    out, same = [], []
    for z in stages:
        if z == pick.zero_stage:
            continue
        mine = [c for c in cands if c.zero_stage == z]
        if not mine:
            if ask.parallelism.zero_auto:
                out.append(f"ZeRO-{z}: no layout holds the job here")
            continue
        alt = best(mine)
        if not alt.misses and alt.run_cost_usd <= pick.run_cost_usd * 1.005:
            same.append(f"ZeRO-{z}")
        else:
            out.append(_why_over(pick, alt))
    if same:
        out.append(f"{', '.join(same)}: within 0.5% of ZeRO-{pick.zero_stage}'s cost here")
    if ask.training.recompute_auto:
        for r in RECOMPUTES:
            mine = [c for c in cands if c.recompute == r]
            if r == pick.recompute:
                continue
            if not mine:
                out.append(f"{REC[r]}: no layout holds the job here")
                continue
            out.append(_why_over(pick, best(mine), "recompute"))
    out += _schedules_and_ep(pick, cands, ask)
    asked = ask.request.batch_or_one
    if pick.micro_batch < asked:
        given = "the default" if ask.request.batch == type(ask.request).model_fields["batch"].default else "the"
        what = f"{given} {asked}" + ("" if given == "the default" else " given")
        out.append(f"micro-batch {pick.micro_batch}, not {what}: the largest that fits this layout")
    return out


def _schedules_and_ep(pick: TrainingCandidate, cands: list[TrainingCandidate], ask: TrainingAsk) -> list[str]:
    """A pipelined pick against its best run under each other schedule tried, a mixture of experts' pick against
    each other expert-parallel degree tried, a ZeRO-3 pick against the other sharding (HSDP or over all ranks)
    tried (where the search chose them)."""
    out = []
    par = ask.parallelism
    if pick.pp > 1 and (par.virtual_stages is None or par.pipeline_schedule is None):
        piped = [c for c in cands if c.pp > 1]
        for v in sorted({_schedule(c) for c in piped} - {_schedule(pick)}):
            out.append(_why_over(pick, best([c for c in piped if _schedule(c) == v]), "schedule"))
        if par.pipeline_schedule is None and any(c.pipeline_schedule == "zb-h1" for c in piped):
            out.append(
                "1F1B: not tried, never cheaper than zero-bubble ZB-H1 on the same layout (the same memory, a bubble "
                "larger by twice the weight-gradient matmuls x (pp - 1) / micro-batches)"
            )
    if ask.parallelism.ep is None:
        for e in sorted({c.ep for c in cands} - {pick.ep}):
            out.append(_why_over(pick, best([c for c in cands if c.ep == e]), "ep"))
    if ask.parallelism.cp == 1:
        for k in sorted({c.cp for c in cands} - {pick.cp}):
            out.append(_why_over(pick, best([c for c in cands if c.cp == k]), "cp"))
    if pick.zero_stage == 3 and ask.parallelism.shard_gpus is None:  # HSDP against over all ranks, or back
        other = [c for c in cands if c.zero_stage == 3 and bool(c.shard_gpus) != bool(pick.shard_gpus)]
        if other:
            out.append(_why_over(pick, best(other), "hsdp"))
    return out


def finish(pick: TrainingCandidate, cands: list[TrainingCandidate], ask: TrainingAsk) -> TrainingCandidate:
    stages = sorted({c.zero_stage for c in cands} | ({0, 1, 2, 3} if ask.parallelism.zero_auto else set()))
    pick.tried = tried(pick, cands, stages, ask)
    pick.why += pick.tried
    return pick


def search_step(c: TrainingCandidate) -> WhyStep | None:
    """The why-chain's step naming what the search tried and why the pick won (None: nothing else was tried)."""
    if not c.tried:
        return None
    return WhyStep(label="Layout searched", value=c.label, detail="; ".join(c.tried))
