"""Costs per offer for a scenario, and the recommendation.

The rule (DOMAIN.md): rent the least expensive configuration that fits the COMPLETE memory budget
and meets the latency target (TTFT and TPOT) or the completion-time target. Candidates are every
catalog GPU x GPU count x offer x weights format; each rejected candidate keeps the reason.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .catalog import GPU, get_gpu
from .cost import (
    cost_per_million_tokens,
    gpu_hours,
    monthly_always_on,
    replicas_for_traffic,
    run_cost,
    serverless_monthly,
    training_flops,
)
from .formats import get_format
from .memory import max_batch, memory_budget, min_gpus
from .model import ModelArch, params_active
from .perf import PerfAssumptions, Workload, predict
from .pricing import Offer
from .scenario import Scenario
from .serving import Replica, capacity, engine_limits, max_request_rate, serve
from .units import GB, SECONDS_PER_HOUR

DEFAULT_MFU = 0.40  # training MFU when the user gives none (large dense runs report 0.35-0.55)
COLD_START_FIXED_S = 20.0  # serverless worker start before the weights load (container, engine)
WEIGHT_LOAD_BYTES_PER_S = 2 * GB  # model load speed at cold start (network volume / local NVMe)


def filter_offers(offers: list[Offer], sc: Scenario) -> list[Offer]:
    """The scenario's pricing filters. Interactive serving leaves out interruptible (spot) offers unless
    the user asks for spot: a reclaimed server drops live users."""
    out = []
    for o in offers:
        if o.interruptible and sc.mode == "inference" and sc.serving == "interactive" and (sc.billing or "") != "spot":
            continue
        if sc.provider and o.provider.lower() != sc.provider.lower():
            continue
        if sc.billing:
            want = sc.billing.lower()
            if want == "serverless" and not o.is_serverless:
                continue
            if want == "reserved" and not o.billing_model.startswith("reserved"):
                continue
            if want not in ("serverless", "reserved") and o.billing_model != want:
                continue
        out.append(o)
    return out


@dataclass
class Layout:
    gpu: GPU
    tp: int
    pp: int
    replica_gpus: int
    note: str | None = None


def layout_for(m: ModelArch, sc: Scenario, gpu: GPU, weights_format: str | None = None) -> Layout | None:
    """The scenario's layout when the model fits there, else the smallest one that fits."""
    req = sc.memory_request(weights_format=get_format(weights_format or sc.weights_format).name)
    cap = gpu.vram_usable_bytes * req.assumptions.memory_utilization
    try:
        if memory_budget(m, req).per_gpu_bytes <= cap:
            return Layout(gpu, sc.tp, sc.pp, req.tp * req.pp)
    except ValueError:
        pass
    lay = min_gpus(m, req, gpu)
    if lay is None:
        return None
    if req.mode == "inference":
        return Layout(gpu, lay.tp, lay.pp, lay.tp * lay.pp, f"needs tp={lay.tp} x pp={lay.pp}")
    return Layout(gpu, lay.tp, lay.pp, lay.gpus, f"needs {lay.gpus} GPUs (tp={lay.tp}, pp={lay.pp}, dp={lay.dp})")


def cold_start_s(m: ModelArch, weights_format: str) -> float:
    from .model import params_total

    return COLD_START_FIXED_S + params_total(m) * get_format(weights_format).bytes_per_value / WEIGHT_LOAD_BYTES_PER_S


@dataclass
class Candidate:
    gpu: str
    weights_format: str
    offer: Offer
    gpus: int
    tp: int
    pp: int
    replicas: int
    monthly_usd: float | None
    run_cost_usd: float | None
    ttft_s: float | None = None
    tpot_s: float | None = None
    wall_hours: float | None = None
    output_cost_per_million_usd: float | None = None
    input_cost_per_million_usd: float | None = None
    misses: list[str] = field(default_factory=list)
    why: list[str] = field(default_factory=list)
    requests_per_s_per_replica: float | None = None

    @property
    def rank_cost(self) -> float:
        v = self.run_cost_usd if self.monthly_usd is None else self.monthly_usd
        return math.inf if v is None else v

    def to_dict(self) -> dict:
        return {
            "gpu": self.gpu,
            "weights_format": self.weights_format,
            "offer_id": self.offer.offer_id,
            "provider": self.offer.provider,
            "product": self.offer.product,
            "billing_model": self.offer.billing_model,
            "gpus": self.gpus,
            "tp": self.tp,
            "pp": self.pp,
            "replicas": self.replicas,
            "monthly_usd": self.monthly_usd,
            "run_cost_usd": self.run_cost_usd,
            "ttft_s": self.ttft_s,
            "tpot_s": self.tpot_s,
            "wall_hours": self.wall_hours,
            "output_cost_per_million_usd": self.output_cost_per_million_usd,
            "input_cost_per_million_usd": self.input_cost_per_million_usd,
            "fits": True,
            "meets_target": not self.misses,
            "misses": self.misses,
            "why": self.why,
            "requests_per_s_per_replica": self.requests_per_s_per_replica,
            "source": self.offer.source,
            "price_as_of": self.offer.price_as_of,
        }


def _inference_candidates(
    m: ModelArch, sc: Scenario, offers: list[Offer], formats: list[str], pa: PerfAssumptions
) -> tuple[list[Candidate], list[dict]]:
    cands: list[Candidate] = []
    rejected: list[dict] = []
    by_gpu: dict[str, list[Offer]] = {}
    for o in offers:
        by_gpu.setdefault(o.gpu, []).append(o)
    for gid, gpu_offers in by_gpu.items():
        gpu = get_gpu(gid)
        for fmt in formats:
            lay = layout_for(m, sc, gpu, fmt)
            if lay is None:
                rejected.append(
                    {
                        "gpu": gid,
                        "weights_format": fmt,
                        "reason": "does not fit the complete memory budget on any layout",
                    }
                )
                continue
            req = sc.memory_request(weights_format=fmt).model_copy(
                update={"tp": lay.tp, "pp": lay.pp, "gpus": lay.replica_gpus}
            )
            mb = max_batch(m, req, gpu)
            batch = mb if sc.batch == "max" else min(sc.batch, max(1, mb))
            if batch < 1:
                rejected.append(
                    {"gpu": gid, "weights_format": fmt, "reason": "no room for even one sequence's KV cache"}
                )
                continue
            wl = sc.workload(lay.tp, lay.pp, fmt)
            r = predict(m, gpu, wl, batch, sc.input_tokens, sc.output_tokens, pa, with_compute_bound_batch=False)
            ttft, tpot = r.ttft_s, r.tpot_s
            misses = _target_misses(sc, ttft, tpot)
            req_per_s, replicas, load_line, e2e_s = batch / r.e2e_request_s, 1, None, r.e2e_request_s
            if sc.requests_per_day:
                t = traffic_fit(m, sc, gpu, wl, mb, pa)
                ttft, tpot, misses, req_per_s, load_line = t.ttft_p95_s, t.tpot_s, t.misses, t.capacity, t.line
                replicas, e2e_s = t.replicas, t.e2e_s
                batch = min(mb, engine_limits(gpu).max_num_seqs)
            used = memory_budget(m, req.model_copy(update={"batch": batch})).per_gpu_bytes
            usable = gpu.vram_usable_bytes * req.assumptions.memory_utilization
            fits_line = f"fits: {used / GB:,.1f} GB of {usable / GB:,.1f} GB usable per GPU at batch {batch}"
            if load_line:
                fits_line += f"; {load_line}"
            for o in gpu_offers:
                gpus = lay.replica_gpus * replicas
                why = [fits_line]
                if lay.note:
                    why.append(lay.note)
                if o.is_serverless:
                    if not sc.requests_per_day:
                        rejected.append(
                            {
                                "gpu": gid,
                                "weights_format": fmt,
                                "offer_id": o.offer_id,
                                "reason": "serverless needs a traffic estimate (requests per day)",
                            }
                        )
                        continue
                    if lay.replica_gpus > o.gpus_per_node:
                        rejected.append(
                            {
                                "gpu": gid,
                                "weights_format": fmt,
                                "offer_id": o.offer_id,
                                "reason": f"needs {lay.replica_gpus} GPUs per worker; offer has {o.gpus_per_node:g}",
                            }
                        )
                        continue
                    if not req_per_s:
                        rejected.append(
                            {
                                "gpu": gid,
                                "weights_format": fmt,
                                "offer_id": o.offer_id,
                                "reason": "a worker cannot meet the latency targets at any load",
                            }
                        )
                        continue
                    sl = serverless_monthly(
                        o.price_per_node_hour_usd,
                        sc.requests_per_day,
                        e2e_s,
                        req_per_s,
                        cold_start_s(m, fmt),
                        o.serverless_idle_timeout_default_s or 5.0,
                        sc.hours_per_month,
                        sc.peak_to_average,
                    )
                    if o.billing_model == "serverless_active":  # always running, billed while idle
                        monthly = sl.workers * o.price_per_node_hour_usd * sc.hours_per_month
                        why.append(f"serverless active workers: {sl.workers} running 24/7 (billed while idle)")
                    else:
                        monthly = sl.monthly_usd
                        why.append(
                            f"serverless: {sl.workers_average} warm worker(s), up to {sl.workers} at peak, each "
                            f"batching up to {req_per_s:,.2f} req/s; {sl.billed_seconds_per_month / 3600:,.0f} "
                            f"billed h/month incl. {sl.cold_starts_per_month:,.0f} cold starts (after idle gaps "
                            "longer than the idle timeout)"
                        )
                    replicas_used = sl.workers
                else:
                    monthly = monthly_always_on(o, gpus, sc.hours_per_month)
                    replicas_used = replicas
                out_cost = cost_per_million_tokens(
                    o.price_per_node_hour_usd * math.ceil(lay.replica_gpus / o.gpus_per_node - 1e-9),
                    r.decode_tokens_per_s,
                    sc.utilization,
                )
                in_cost = cost_per_million_tokens(
                    o.price_per_node_hour_usd * math.ceil(lay.replica_gpus / o.gpus_per_node - 1e-9),
                    r.prefill_tokens_per_s,
                    sc.utilization,
                )
                cands.append(
                    Candidate(
                        gpu=gid,
                        weights_format=fmt,
                        offer=o,
                        gpus=gpus,
                        tp=lay.tp,
                        pp=lay.pp,
                        replicas=replicas_used,
                        monthly_usd=monthly,
                        run_cost_usd=None,
                        ttft_s=ttft,
                        tpot_s=tpot,
                        output_cost_per_million_usd=out_cost,
                        input_cost_per_million_usd=in_cost,
                        misses=misses,
                        why=why,
                        requests_per_s_per_replica=req_per_s,
                    )
                )
    return cands, rejected


def _target_misses(sc: Scenario, ttft_s: float | None, tpot_s: float | None, what: str = "TTFT") -> list[str]:
    misses = []
    if sc.ttft_target_s and ttft_s is not None and ttft_s > sc.ttft_target_s:
        misses.append(f"{what} {ttft_s * 1e3:,.0f} ms > target {sc.ttft_target_s * 1e3:,.0f} ms")
    if sc.tpot_target_s and tpot_s is not None and tpot_s > sc.tpot_target_s:
        misses.append(f"TPOT {tpot_s * 1e3:,.1f} ms > target {sc.tpot_target_s * 1e3:,.1f} ms")
    return misses


@dataclass
class Traffic:
    """How one replica layout serves the scenario's traffic (serving.py: continuous batching under load)."""

    capacity: float  # requests per second one replica sustains within the targets (0: none)
    replicas: int
    ttft_p95_s: float | None  # at the peak rate shared by the replicas (or at light load when capacity is 0)
    tpot_s: float | None
    e2e_s: float
    misses: list[str]
    line: str


def traffic_fit(m: ModelArch, sc: Scenario, gpu: GPU, wl: Workload, kv_sequences: int, pa: PerfAssumptions) -> Traffic:
    """Replicas for the traffic: ceil(peak rate / one replica's capacity within the targets), where peak rate =
    requests per day / 86,400 x peak-to-average. Batch serving has no latency targets: capacity is the rate at
    which a replica saturates."""
    rep = Replica(m, gpu, wl, sc.input_tokens, sc.output_tokens, kv_sequences, engine_limits(gpu), pa)
    interactive = sc.serving == "interactive"
    ttft_t, tpot_t = (sc.ttft_target_s, sc.tpot_target_s) if interactive else (None, None)
    peak = sc.requests_per_day / 86_400 * sc.peak_to_average
    cap = capacity(rep, ttft_t, tpot_t)
    if cap <= 0:
        light = serve(rep, request_rate=max_request_rate(rep) * 1e-3)
        misses = _target_misses(sc, light.ttft_p95_s, light.tpot_mean_s, "p95 TTFT")
        misses = [f"{x} even at light load" for x in misses]
        return Traffic(0.0, 1, light.ttft_p95_s, light.tpot_mean_s, light.e2e_mean_s, misses, "")
    replicas = replicas_for_traffic(sc.requests_per_day, sc.peak_to_average, cap)
    at = serve(rep, request_rate=peak / replicas)
    line = (
        f"{peak:,.2f} req/s at peak ({sc.requests_per_day:,.0f}/day x {sc.peak_to_average:g}) over {replicas} "
        f"replica(s) of {cap:,.2f} req/s each (continuous batching: p95 TTFT {at.ttft_p95_s * 1e3:,.0f} ms, "
        f"TPOT {(at.tpot_mean_s or 0) * 1e3:,.1f} ms at that load)"
    )
    return Traffic(cap, replicas, at.ttft_p95_s, at.tpot_mean_s, at.e2e_mean_s, [], line)


def training_tokens_of(sc: Scenario, m: ModelArch) -> tuple[float, str | None]:
    if sc.training_tokens:
        return sc.training_tokens, None
    from .model import params_total

    tokens = 20.0 * params_total(m)
    return tokens, f"no training tokens given: {tokens:.3g} assumed (20 tokens per parameter, Chinchilla)"


def _training_candidates(
    m: ModelArch, sc: Scenario, offers: list[Offer], pa: PerfAssumptions
) -> tuple[list[Candidate], list[dict], dict]:
    tokens, note = training_tokens_of(sc, m)
    mfu = sc.mfu or DEFAULT_MFU
    method = sc.method if sc.mode == "finetune" else "full"
    flops = training_flops(
        params_active(m),
        tokens,
        m.num_layers,
        sc.context_tokens,
        m.num_attention_heads * (m.v_head_dim if m.is_mla else m.d),
        method,
    )
    cands: list[Candidate] = []
    rejected: list[dict] = []
    by_gpu: dict[str, list[Offer]] = {}
    for o in offers:
        if not o.is_serverless:
            by_gpu.setdefault(o.gpu, []).append(o)
    for gid, gpu_offers in by_gpu.items():
        gpu = get_gpu(gid)
        lay = layout_for(m, sc, gpu)
        if lay is None:
            rejected.append(
                {"gpu": gid, "reason": "model states + activations do not fit on any layout up to 4,096 GPUs"}
            )
            continue
        peak = gpu.dense_peak_flops("bf16")[0]
        gh = gpu_hours(flops, peak, mfu)
        count = max(lay.replica_gpus, sc.gpus)
        if sc.deadline_hours:
            need = math.ceil(gh / sc.deadline_hours - 1e-9)
            step = lay.tp * lay.pp
            count = max(count, math.ceil(need / step) * step)
        wall = gh / count
        misses = (
            [f"{wall:,.0f} h > deadline {sc.deadline_hours:,.0f} h"]
            if sc.deadline_hours and wall > sc.deadline_hours * 1.0001
            else []
        )
        for o in gpu_offers:
            rc = run_cost(o, count, wall * SECONDS_PER_HOUR, sc.spot_restart_overhead, sc.hours_per_month)
            total = rc.run_cost_usd * (1 + sc.overhead_factor)
            why = [
                f"{count} GPUs, {gh:,.0f} GPU-hours at MFU {mfu:.2f} of {peak / 1e12:,.0f} TFLOP/s dense BF16",
                f"+{sc.overhead_factor:.0%} for failed runs and sweeps",
            ] + rc.notes
            if lay.note:
                why.append(lay.note)
            cands.append(
                Candidate(
                    gpu=gid,
                    weights_format=sc.weights_format,
                    offer=o,
                    gpus=count,
                    tp=lay.tp,
                    pp=lay.pp,
                    replicas=1,
                    monthly_usd=None,
                    run_cost_usd=total,
                    wall_hours=wall,
                    misses=misses,
                    why=why,
                )
            )
    return cands, rejected, {"training_flops": flops, "training_tokens": tokens, "mfu": mfu, "tokens_note": note}


def recommend(sc: Scenario, offers: list[Offer], explore_formats: bool = True, top: int = 5) -> dict:
    """Rank every feasible candidate by cost; say why the top picks win and what near misses miss."""
    m = sc.model()
    pa = PerfAssumptions()
    offers = filter_offers(offers, sc)
    if not offers:
        return {"picks": [], "near_misses": [], "rejected": [], "message": "no offers match the pricing filters"}
    extra: dict = {}
    if sc.mode == "inference":
        formats = [get_format(sc.weights_format).name]
        if explore_formats:
            formats += [f for f in ("fp8", "int4-g128") if f not in formats]
        cands, rejected = _inference_candidates(m, sc, offers, formats, pa)
    else:
        cands, rejected, extra = _training_candidates(m, sc, offers, pa)
    ok = sorted((c for c in cands if not c.misses), key=lambda c: c.rank_cost)
    missed = sorted((c for c in cands if c.misses), key=lambda c: c.rank_cost)
    picks = ok[:top]
    best = picks[0].rank_cost if picks else math.inf
    near = [c for c in missed if c.rank_cost < best][:top]
    for i, c in enumerate(picks):
        if c.weights_format != get_format(sc.weights_format).name:
            c.why.append(f"uses {get_format(c.weights_format).label} weights: check quality before switching")
        if i == 0 and len(ok) > 1:
            c.why.append(
                f"cheapest that fits and meets the target; next best {ok[1].offer.offer_id} "
                f"costs {ok[1].rank_cost - c.rank_cost:,.0f} USD more"
            )
    return {
        "unit": "USD per month (always-on or serverless)" if sc.mode == "inference" else "USD per training run",
        "picks": [c.to_dict() for c in picks],
        "near_misses": [c.to_dict() for c in near],
        "rejected": rejected,
        "candidates": len(cands),
        **extra,
    }


def cost_table(sc: Scenario, offers: list[Offer]) -> dict:
    """Per-offer costs at the scenario's GPU count (or each GPU's minimum): per-run and monthly always-on."""
    m = sc.model()
    offers = filter_offers(offers, sc)
    rows = []
    summary: dict = {}
    if sc.mode == "inference":
        cands, rejected = _inference_candidates(m, sc, offers, [get_format(sc.weights_format).name], PerfAssumptions())
        for c in cands:
            if c.offer.is_serverless:
                continue  # serverless has no per-run cluster; it is in the serverless table
            # a per-run job: one day's requests (or one hour without traffic) on one replica, batched
            replica_gpus = c.gpus // max(1, c.replicas)
            if sc.requests_per_day and c.requests_per_s_per_replica:
                runtime = sc.requests_per_day / c.requests_per_s_per_replica
            else:
                runtime = SECONDS_PER_HOUR
            rc = run_cost(c.offer, replica_gpus, runtime, sc.spot_restart_overhead, sc.hours_per_month)
            rows.append(
                {
                    **c.to_dict(),
                    "run_cost_usd": rc.run_cost_usd,
                    "run_hours": runtime / 3600,
                    "run_description": "one day's requests as a batch job" if sc.requests_per_day else "one hour",
                    "monthly_always_on_usd": c.monthly_usd,
                    "notes": rc.notes,
                }
            )
        serverless = [c for c in cands if c.offer.is_serverless]
        summary["serverless"] = [{**c.to_dict(), "monthly_usd": c.monthly_usd} for c in serverless]
    else:
        cands, rejected, summary = _training_candidates(m, sc, offers, PerfAssumptions())
        for c in cands:
            rows.append(
                {
                    **c.to_dict(),
                    "monthly_always_on_usd": monthly_always_on(c.offer, c.gpus, sc.hours_per_month),
                    "gpu_hours": c.wall_hours * c.gpus,
                    "notes": c.why,
                }
            )
    return {"offers": rows, "rejected": rejected, **summary}
