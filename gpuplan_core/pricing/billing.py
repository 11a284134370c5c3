"""The cost engine: billing rules applied to a workload. Pure functions; money in US dollars.

billed seconds  = max(minimum, runtime rounded to the billing increment (up, or down where the
                  contract says so)); an offer that states no increment is billed per second
nodes           = ceil(GPUs needed / GPUs per node): every GPU of every node is paid, idle or not
per-run cost    = nodes x node price per hour x billed hours  (spot: runtime x (1 + restart overhead))
monthly         = nodes x node price per hour x 730 h (always-on: billable while idle)
serverless      = per request: execution + min(idle gap, idle timeout) + cold start when the worker
                  had gone to sleep; Poisson arrivals: E[min(gap, T)] = (1 - e^(-rate T)) / rate,
                  P(gap > T) = e^(-rate T)
break-even      = always-on price / serverless price: the busy share above which always-on is cheaper
training FLOPs  = tokens x (6 x active params + 6 x layers x context x heads x head_dim) (causal
                  attention: half of PaLM's 12 L H Q T), LoRA/QLoRA 4 x params (no weight gradients
                  for the frozen base; a heuristic, editable)
GPU-hours       = FLOPs / (dense peak x MFU x 3600); wall hours = GPU-hours / GPUs
$/1M tokens     = price per hour of the replica / (tokens per second x 3600 x utilization) x 1e6
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from ..common.units import HOURS_PER_MONTH, SECONDS_PER_DAY, SECONDS_PER_HOUR
from .offers import Offer


def billed_seconds(
    runtime_s: float, increment_s: float | None, min_billed_s: float | None, rounding: str = "up"
) -> float:
    """Seconds a provider bills for a runtime. Rounding "down" bills whole increments only (Azure);
    "up" and "unknown" round up (the conservative reading)."""
    if runtime_s < 0:
        raise ValueError("runtime_s: must be >= 0")
    inc = increment_s or 1.0
    units = runtime_s / inc
    units = math.floor(units + 1e-9) if rounding == "down" else math.ceil(units - 1e-9)
    return max(min_billed_s or 0.0, units * inc)


def nodes_needed(gpus: float, gpus_per_node: float) -> int:
    return max(1, math.ceil(gpus / gpus_per_node - 1e-9))


@dataclass
class RunCost:
    offer_id: str
    provider: str
    product: str
    gpu: str
    billing_model: str
    gpus_needed: int
    nodes: int
    billed_gpus: float
    idle_gpus: float
    runtime_s: float
    billed_s: float
    price_per_node_hour_usd: float
    run_cost_usd: float
    monthly_always_on_usd: float
    notes: list[str]

    def to_dict(self) -> dict:
        return asdict(self)


def run_cost(
    offer: Offer,
    gpus_needed: int,
    runtime_s: float,
    spot_restart_overhead: float = 0.1,
    hours_per_month: float = HOURS_PER_MONTH,
) -> RunCost:
    """A cluster run on one offer: whole nodes, billing increments, minimums, spot restarts, commitments."""
    notes = []
    nodes = nodes_needed(gpus_needed, offer.gpus_per_node)
    billed_gpus = nodes * offer.gpus_per_node
    effective = runtime_s
    if offer.interruptible:
        effective = runtime_s * (1 + spot_restart_overhead)
        notes.append(f"interruptible: runtime x {1 + spot_restart_overhead:.2f} for restarts from checkpoints")
    if offer.billing_increment_s is None:
        notes.append("billing increment not stated: per-second billing assumed")
    secs = billed_seconds(effective, offer.billing_increment_s, offer.min_billed_s, offer.partial_increment_rounding)
    cost = nodes * offer.price_per_node_hour_usd * secs / SECONDS_PER_HOUR
    if offer.commitment_months:
        committed = nodes * offer.price_per_node_hour_usd * offer.commitment_months * hours_per_month
        if committed > cost:
            notes.append(f"reserved for {offer.commitment_months:g} months: the commitment is paid whether used or not")
            cost = committed
    elif offer.billing_model.startswith("reserved"):
        notes.append("reserved price with an unstated term: hourly rate applied to the run")
    if billed_gpus > gpus_needed:
        notes.append(f"{billed_gpus - gpus_needed:g} idle GPUs paid: nodes come with {offer.gpus_per_node:g} GPUs")
    if not offer.price_includes_host:
        notes.append("GPU price only: host CPU and memory are billed on top")
    return RunCost(
        offer_id=offer.offer_id,
        provider=offer.provider,
        product=offer.product,
        gpu=offer.gpu,
        billing_model=offer.billing_model,
        gpus_needed=gpus_needed,
        nodes=nodes,
        billed_gpus=billed_gpus,
        idle_gpus=billed_gpus - gpus_needed,
        runtime_s=runtime_s,
        billed_s=secs,
        price_per_node_hour_usd=offer.price_per_node_hour_usd,
        run_cost_usd=cost,
        monthly_always_on_usd=monthly_always_on(offer, gpus_needed, hours_per_month),
        notes=notes,
    )


def monthly_always_on(offer: Offer, gpus_needed: int, hours_per_month: float = HOURS_PER_MONTH) -> float:
    """Continuous allocation: billable while idle, whatever the traffic."""
    return nodes_needed(gpus_needed, offer.gpus_per_node) * offer.price_per_node_hour_usd * hours_per_month


# ---- serverless ------------------------------------------------------------------------------------


@dataclass
class ServerlessCost:
    requests_per_month: float
    billed_seconds_per_request: float
    billed_seconds_per_month: float
    cold_starts_per_month: float
    workers: int  # at the peak rate
    workers_average: int  # at the average rate: the workers the platform keeps warm most of the time
    monthly_usd: float
    busy_share: float  # of the average workers' time with at least one request in flight

    def to_dict(self) -> dict:
        return asdict(self)


def serverless_monthly(
    price_per_hour: float,
    requests_per_day: float,
    e2e_s: float,
    capacity_requests_per_s: float,
    cold_start_s: float,
    idle_timeout_s: float,
    *,
    hours_per_month: float = HOURS_PER_MONTH,
    peak_to_average: float = 1.0,
) -> ServerlessCost:
    """Scale-to-zero workers billed for start-up, execution and the idle timeout (RunPod/Modal rules).

    A worker batches like any replica: it holds requests in flight up to its capacity (requests per second), so
    the workers needed are rate / capacity (at the average rate: the warm workers; at the peak: the most). Each
    warm worker gets Poisson arrivals at r = rate / warm workers, each request in flight for e2e_s = x. A cycle
    (renewal reward): a busy period with at least one request in flight, mean (exp(r x) - 1) / r (M/G/inf);
    then an idle gap G ~ Exp(r), billed min(G, timeout T); when G > T (probability exp(-r T)) the worker has
    gone to sleep and the next request waits for a cold start C, billed. So per cycle:
        billed = E[busy] + (1 - exp(-r T)) / r + exp(-r T) C,   length = E[busy] + 1 / r + exp(-r T) C,
    and cold starts happen once per cycle that slept, never for requests that find the worker awake."""
    if min(requests_per_day, e2e_s, cold_start_s, idle_timeout_s) < 0 or capacity_requests_per_s <= 0:
        raise ValueError("requests_per_day, e2e_s, cold_start_s, idle_timeout_s: must be >= 0; capacity: > 0")
    month_s = hours_per_month * SECONDS_PER_HOUR
    requests = requests_per_day * month_s / SECONDS_PER_DAY
    if requests == 0:
        return ServerlessCost(0, 0, 0, 0, 0, 0, 0.0, 0.0)
    rate = requests / month_s
    workers = max(1, math.ceil(rate * peak_to_average / capacity_requests_per_s - 1e-9))
    warm = max(1, math.ceil(rate / capacity_requests_per_s - 1e-9))
    r = rate / warm
    busy = math.expm1(min(r * e2e_s, 700.0)) / r
    slept = math.exp(-r * idle_timeout_s)
    cycle = busy + 1 / r + slept * cold_start_s
    billed_per_cycle = busy + (1 - slept) / r + slept * cold_start_s
    cycles = warm * month_s / cycle
    billed = cycles * billed_per_cycle
    return ServerlessCost(
        requests_per_month=requests,
        billed_seconds_per_request=billed / requests,
        billed_seconds_per_month=billed,
        cold_starts_per_month=cycles * slept,
        workers=workers,
        workers_average=warm,
        monthly_usd=billed / SECONDS_PER_HOUR * price_per_hour,
        busy_share=busy / cycle,
    )


def break_even_busy_share(always_on_price_per_hour: float, serverless_price_per_hour: float) -> float:
    """Busy share of the month above which an always-on server is cheaper than serverless (billed only
    while busy): always-on price / serverless price (RunPod H100: 3.49 / 4.176 = 83.6%)."""
    return always_on_price_per_hour / serverless_price_per_hour


# ---- training ---------------------------------------------------------------------------------------


def training_flops(
    active_params: float, tokens: float, layers: int = 0, context: int = 0, attn_width: int = 0, method: str = "full"
) -> float:
    """6 N D (+ causal attention 6 L s (a d) per token); LoRA/QLoRA: 4 N D (no base weight gradients)."""
    return training_flops_factor(method) * (active_params + layers * context * attn_width) * tokens


def training_flops_factor(method: str) -> int:
    """FLOPs per active parameter per token: 6 (forward 2 + backward 4) for full training; 4 for LoRA / QLoRA,
    whose frozen base computes input gradients but no weight gradients."""
    return 6 if method == "full" else 4


def gpu_hours(total_flops: float, peak_flops_per_s: float, mfu: float) -> float:
    if not 0 < mfu <= 1:
        raise ValueError("mfu: must be between 0 (exclusive) and 1")
    return total_flops / (peak_flops_per_s * mfu * SECONDS_PER_HOUR)


# ---- inference economics -----------------------------------------------------------------------------


def cost_per_million_tokens(price_per_hour: float, tokens_per_s: float, utilization: float) -> float:
    if tokens_per_s <= 0:
        return math.inf
    return price_per_hour / (tokens_per_s * SECONDS_PER_HOUR * utilization) * 1e6


def replicas_for_traffic(requests_per_day: float, peak_to_average: float, requests_per_s_per_replica: float) -> int:
    peak = requests_per_day / SECONDS_PER_DAY * peak_to_average  # as Traffic.peak_requests_per_s
    if requests_per_s_per_replica <= 0:
        raise ValueError("requests_per_s_per_replica: must be > 0")
    return max(1, math.ceil(peak / requests_per_s_per_replica - 1e-9))


def replicas_held(gpus: int, replica_gpus: int) -> int:
    """The replicas a GPU count the user set holds (at least one): 2 GPUs of 1-GPU replicas are 2, 3 of 2-GPU are 1.
    A layout runs at least these whatever the traffic needs (plan/search.served, the Performance page's curve)."""
    return max(1, gpus // max(1, replica_gpus))


def lifetime(training_usd: float, monthly_inference_usd: float, months: int = 24) -> dict:
    """Cumulative spend month by month (training once, in month 0) and the month inference passes training."""
    rows = []
    crossover = None
    for mth in range(0, months + 1):
        inf = monthly_inference_usd * mth
        rows.append(
            {
                "month": mth,
                "training_usd": training_usd,
                "inference_cumulative_usd": inf,
                "total_usd": training_usd + inf,
            }
        )
        if crossover is None and mth > 0 and inf >= training_usd:
            crossover = mth
    return {"months": rows, "inference_passes_training_month": crossover}


# Market context: ANALYST ESTIMATES with different baselines (seed 000). One at a time, never averaged.
MARKET_ESTIMATES = {
    "a16z": {
        "label": "ANALYST ESTIMATE: a16z LLMflation (12 Nov 2024): ~10x cheaper per year at equal MMLU (API prices)",
        "annual_factor": 1 / 10,
    },
    "epoch": {
        "label": (
            "ANALYST ESTIMATE: Epoch AI (22 Sep 2026): ~47% cheaper per quarter for fixed performance (~13x per year)"
        ),
        "annual_factor": (1 - 0.47) ** 4,
    },
    "stanford": {
        "label": "ANALYST ESTIMATE: Stanford AI Index 2025: >280x cheaper GPT-3.5-level inference, Nov 2022 - Oct 2024",
        "annual_factor": (1 / 280) ** (12 / 23),
    },
}


def market_projection(monthly_usd: float, estimate: str, months: int = 24) -> list[dict]:
    """Monthly cost projected with ONE named analyst estimate (labelled; not a rental-price forecast)."""
    if estimate not in MARKET_ESTIMATES:
        raise ValueError(f"estimate: unknown {estimate!r}; allowed: {', '.join(MARKET_ESTIMATES)}")
    f = MARKET_ESTIMATES[estimate]["annual_factor"]
    return [{"month": m, "monthly_usd": monthly_usd * f ** (m / 12)} for m in range(months + 1)]
