"""Demand that grows: the answer's pick re-planned month by month over the serving lifetime.

For months m = 0 (now) .. N, with the pick's layout and serving model fixed (its capacity within the targets,
``requests_per_s_per_replica``, is a property of one replica and does not change with the traffic):

requests per day(m) = requests per day x (1 + monthly growth)^m, x the spike factor in the spike month
peak rate(m)        = requests per day(m) / 86,400 s x peak-to-average          (Traffic.peak_requests_per_s)
replicas(m)         = max(1, ceil(peak rate(m) / capacity per replica))          (billing.replicas_for_traffic)
monthly cost(m)     = always-on: whole nodes for replicas(m) x GPUs per replica, x node price x hours a month
                      (billing.monthly_always_on, as the pick itself is priced); serverless active workers:
                      replicas(m) workers x their machine price x hours; scale-to-zero serverless: billed per
                      request, so the pick's monthly cost x requests(m) / requests(0)
cumulative(m)       = the sum of months 0 .. m-1 (what serving has cost by the start of month m, as
                      billing.lifetime counts it: with no growth, monthly cost x m)
more replicas       = the first month replicas(m) exceeds the pick's: its replicas no longer meet the targets
crossover           = the first month m > 0 whose cumulative serving cost reaches the training bill
"""

from __future__ import annotations

from ..common.units import SECONDS_PER_DAY
from ..pricing.billing import monthly_always_on, nodes_needed, replicas_for_traffic
from ..pricing.offers import Offer
from ..results.growth import Growth, GrowthMonth
from ..results.plan import Pick
from ..scenario.deployment import Traffic


def growth_problem(traffic: Traffic, pick: Pick | None) -> str | None:
    """Why the pick cannot be re-planned month by month, or None when it can."""
    if not traffic.requests_per_day:
        return "monthly_growth: growth needs a traffic estimate (requests_per_day above 0)"
    if pick is None:
        return "monthly_growth: nothing meets the targets today, so there is no pick to grow"
    if not pick.requests_per_s_per_replica:
        return f"monthly_growth: {pick.layout} has no capacity within the targets to size replicas with"
    return None


def month_cost_usd(pick: Pick, offer: Offer, replicas: int, traffic_share: float, hours_per_month: float) -> float:
    """A month's bill for ``replicas`` copies of the pick's layout on its offer (``traffic_share``: the month's
    requests over today's, for per-request serverless billing)."""
    replica_gpus = pick.replica_gpus
    if offer.billing_model == "serverless_active":  # workers running 24/7, billed while idle
        return (
            replicas
            * offer.price_per_node_hour_usd
            * nodes_needed(replica_gpus, offer.gpus_per_node)
            * (hours_per_month)
        )
    if offer.is_serverless:  # billed per request (start-up, execution, idle timeout): scales with the requests
        return (pick.monthly_usd or 0.0) * traffic_share
    return monthly_always_on(offer, replicas * replica_gpus, hours_per_month)


def grow(
    traffic: Traffic, pick: Pick, offer: Offer, training_usd: float, months: int, hours_per_month: float
) -> Growth:
    """The pick month by month (the module docstring's formulas). Raises ValueError (naming the field) when the
    pick cannot be re-planned (``growth_problem``)."""
    if problem := growth_problem(traffic, pick):
        raise ValueError(problem)
    if offer.offer_id != pick.offer_id:
        raise ValueError(f"offer: {offer.offer_id} is not the pick's offer {pick.offer_id}")
    if months < 1:
        raise ValueError("months: must be at least 1")
    cap = pick.requests_per_s_per_replica
    today = traffic.requests_per_day
    rows, spent = [], 0.0
    more = crossover = None
    for m in range(months + 1):
        rpd = traffic.requests_per_day_in(m)
        replicas = replicas_for_traffic(rpd, traffic.peak_to_average, cap)
        monthly = month_cost_usd(pick, offer, replicas, rpd / today, hours_per_month)
        if more is None and replicas > pick.replicas:
            more = m
        if crossover is None and m > 0 and spent >= training_usd:
            crossover = m
        rows.append(
            GrowthMonth(
                month=m,
                requests_per_day=rpd,
                peak_requests_per_s=rpd / SECONDS_PER_DAY * traffic.peak_to_average,
                replicas=replicas,
                monthly_usd=monthly,
                training_usd=training_usd,
                inference_cumulative_usd=spent,
                total_usd=training_usd + spent,
            )
        )
        spent += monthly
    step = rows[more] if more is not None else None
    return Growth(
        monthly_growth=traffic.monthly_growth,
        spike_month=traffic.spike_month,
        spike_factor=traffic.spike_factor,
        offer_id=pick.offer_id,
        layout=pick.layout,
        requests_per_s_per_replica=cap,
        pick_replicas=pick.replicas,
        pick_monthly_usd=pick.monthly_usd,
        months=rows,
        more_replicas_month=more,
        next_step_replicas=None if step is None else step.replicas,
        next_step_monthly_usd=None if step is None else step.monthly_usd,
        inference_passes_training_month=crossover if training_usd > 0 else None,
    )
