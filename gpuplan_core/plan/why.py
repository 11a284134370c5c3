"""The why-chain: each step of an answer as a PM reads it aloud, printed so that it multiplies out as printed.

    serving   requests per day -> peak requests/s = requests / 86,400 s x peak-to-average
              -> replicas = ceil(peak / one replica's capacity) -> GPUs = replicas x GPUs per replica (whole nodes)
              -> monthly cost = nodes (or GPUs) x price per hour x hours a month
              (-> speculative decoding on or off, and what the other costs, where a draft or MTP module is weighed)
    training  compute = tokens x FLOPs per token -> GPU-hours = FLOPs / peak / MFU / 3,600 s
              -> wall time = GPU-hours / GPUs -> price per hour = nodes (or GPUs) x price
              -> hours billed = wall time x spot restarts, rounded to the billing increment, at least the minimum
              -> cost of the run = price per hour x hours billed x (1 + failed runs and sweeps)
    energy    kWh = GPUs x hours x watts x PUE / 1,000 -> its cost = kWh x USD/kWh; CO2 = kWh x g/kWh / 10^6

The rule for printing (one rule, common/text.py): counts, prices, constants and inputs print as they are (``num``);
computed numbers to 3 significant figures, hours to 4 (they multiply into a cost printed to the cent or the dollar);
costs as every headline prints them (``usd``). Each arithmetic step carries its terms (``Calc``), and its detail is
printed from them, so a test can redo the arithmetic on exactly what the reader sees.
"""

from __future__ import annotations

from ..common.units import SECONDS_PER_DAY, SECONDS_PER_HOUR
from ..hardware.catalog import get_gpu
from ..model.formats import get_format
from ..pricing.billing import nodes_needed, run_cost, training_flops_factor
from ..pricing.energy import EnergyReport
from ..pricing.offers import Offer
from ..results.plan import Calc, Pick, Term, WhyStep, hours, hours_into, money, num, rounded
from ..scenario.deployment import Traffic
from ..scenario.scenario import Scenario
from .speculation import speculation_line
from .training import TrainingCandidate
from .training_ask import TrainingAsk
from .training_layout import network_text
from .training_tried import search_step


def _n(count: float, unit: str) -> str:
    return unit if count == 1 else unit + "s"


def _price_per_hour(o: Offer, gpus: int) -> tuple[list[Term], float]:
    """The terms of what the GPUs cost an hour: whole nodes x the node price, or GPUs x the GPU price."""
    nodes = nodes_needed(gpus, o.gpus_per_node)
    if o.gpus_per_node > 1:
        unit = f"{_n(nodes, 'node')} of {o.gpus_per_node:g} GPUs"
        return [num(nodes, unit), num(o.price_per_node_hour_usd, "USD/node-hour")], nodes * o.price_per_node_hour_usd
    return [num(nodes, _n(nodes, "GPU")), num(o.price_per_node_hour_usd, "USD/GPU-hour")], (
        nodes * o.price_per_node_hour_usd
    )


# ---- serving ---------------------------------------------------------------------------------------------------


def _traffic_steps(tr: Traffic) -> list[WhyStep]:
    """Requests per day -> peak requests per second."""
    rpd = num(tr.requests_per_day)
    per_s = Calc(
        terms=[rpd, num(SECONDS_PER_DAY, "s", op="/"), num(tr.peak_to_average, "peak-to-average")],
        result=rounded(tr.peak_requests_per_s),
    )
    return [WhyStep(label="Requests per day", value=rpd.text), WhyStep.of("Peak requests per second", per_s)]


def _serving_steps(tr: Traffic, p: Pick) -> list[WhyStep]:
    """Requests per day -> peak requests per second -> one replica's capacity -> replicas (or one replica)."""
    if not tr.requests_per_day:
        return [
            WhyStep(label="One replica", value=p.layout, detail="no traffic estimate: one replica, the static batch")
        ]
    peak, cap = tr.peak_requests_per_s, p.requests_per_s_per_replica
    return [
        *_traffic_steps(tr),
        WhyStep(
            label="One replica's capacity",
            value=rounded(cap, "req/s").text,
            detail=f"{p.layout}, {get_format(p.weights_format).label}; continuous batching, within p95 TTFT and "
            "mean TPOT targets",
        ),
        WhyStep.of("Replicas", Calc(terms=[rounded(peak), rounded(cap, op="/")], step=1, result=num(p.replicas))),
    ]


def _machines_step(p: Pick, o: Offer) -> WhyStep:
    """Replicas x GPUs per replica -> GPUs paid for (whole nodes where the offer rents them) on how many machines."""
    terms = [num(p.replicas, _n(p.replicas, "replica")), num(p.replica_gpus, _n(p.replica_gpus, "GPU"))]
    machines = f"{p.gpus:,} {_n(p.gpus, 'GPU')} on {p.nodes:,} {_n(p.nodes, 'machine')}"
    if o.gpus_per_node > 1 and not o.is_serverless:
        step = Calc(
            terms=terms, result=num(p.gpus), step=o.gpus_per_node, step_text=f"whole {o.gpus_per_node:g}-GPU nodes"
        )
        return WhyStep.of("GPUs and machines", step, value=machines)
    note = "serverless workers" if o.is_serverless else "rented per GPU"
    return WhyStep.of("GPUs and machines", Calc(terms=terms, result=num(p.gpus)), note, value=machines)


def _monthly_step(hours_per_month: float, p: Pick, o: Offer) -> WhyStep:
    """Nodes (or GPUs) x price per hour x hours a month; serverless: workers x their price x the hours billed."""
    month = num(hours_per_month, "h")
    if not o.is_serverless:
        price, _ = _price_per_hour(o, p.replica_gpus * p.replicas)
        calc = Calc(terms=[*price, month], result=money(p.monthly_usd))
        return WhyStep.of("Monthly cost", calc, f"{o.provider}, {o.billing_model.replace('_', ' ')}")
    worker = o.price_per_node_hour_usd * nodes_needed(p.replica_gpus, o.gpus_per_node)
    if o.billing_model == "serverless_active":  # always running
        terms = [num(p.replicas, _n(p.replicas, "worker")), num(worker, "USD/worker-hour"), month]
    else:  # billed while busy, idle up to the timeout, and starting (serverless_monthly)
        billed = hours_into(p.monthly_usd / worker, worker, p.monthly_usd, "worker-hours billed a month")
        terms = [billed, num(worker, "USD/worker-hour")]
    return WhyStep.of("Monthly cost", Calc(terms=terms, result=money(p.monthly_usd)), p.why[-1])


def _speculation_step(p: Pick) -> WhyStep:
    """Speculative decoding weighed at the pick's layout and offer (plan/speculation.py): which is cheaper."""
    s = p.speculation
    return WhyStep(label="Speculative decoding", value="on" if s.runs else "off", detail=speculation_line(s))


def why_inference(tr: Traffic, hours_per_month: float, p: Pick, o: Offer) -> list[WhyStep]:
    """Requests per day -> peak requests/s -> replicas -> GPUs and machines -> monthly cost, for the pick ``p`` on
    its offer ``o``; where speculative decoding was weighed, whether the pick speculates and why."""
    steps = [*_serving_steps(tr, p), _machines_step(p, o)]
    if p.monthly_usd is not None:
        steps.append(_monthly_step(hours_per_month, p, o))
    if p.speculation is not None:
        steps.append(_speculation_step(p))
    return steps


def why_disaggregated(tr: Traffic, hours_per_month: float, p: Pick, o: Offer) -> list[WhyStep]:
    """A disaggregated pick's chain (plan/disaggregated.py): requests -> peak -> prefill workers -> the KV transfer
    -> decode workers -> GPUs and machines -> monthly cost -> why it beat aggregated serving."""
    d, peak = p.disaggregated, tr.peak_requests_per_s
    steps = _traffic_steps(tr)
    for pool, what in (
        (d.prefill, "prompts only, within the p95 TTFT target less the KV transfer"),
        (d.decode, f"decode only, {d.decode_batch:,} sequences a step within the TPOT target"),
    ):
        cap = pool.requests_per_s_per_worker
        calc = Calc(terms=[rounded(peak), rounded(cap, op="/")], step=1, result=num(pool.workers))
        steps.append(WhyStep.of(f"{pool.role.capitalize()} workers", calc, f"{pool.layout} each: {what}"))
    steps.append(
        WhyStep(
            label="KV transfer",
            value=f"{d.kv_transfer_s * 1e3:,.2f} ms a prompt",
            detail=f"{d.kv_transfer_bytes / 1e6:,.1f} MB (prompt tokens x KV bytes per token) / "
            f"{d.link_bytes_per_s / 1e9:,.1f} GB/s over the {d.link}; added to the prefill worker's first token",
        )
    )
    where = "both pools on one machine" if d.shared_machines else "each pool on whole machines of its own"
    steps.append(
        WhyStep(
            label="GPUs and machines",
            value=f"{p.gpus:,} {_n(p.gpus, 'GPU')} on {p.nodes:,} {_n(p.nodes, 'machine')}",
            detail=f"{d.prefill.gpus:,} prefill + {d.decode.gpus:,} decode GPUs, {where}",
        )
    )
    price, _ = _price_per_hour(o, p.gpus)  # both pools' nodes (or GPUs) at the offer's price
    calc = Calc(terms=[*price, num(hours_per_month, "h")], result=money(p.monthly_usd))
    steps.append(WhyStep.of("Monthly cost", calc, f"{o.provider}, {o.billing_model.replace('_', ' ')}"))
    verdict = next(w for w in p.why if w.startswith("disaggregated: ")).removeprefix("disaggregated: ")
    steps.append(WhyStep(label="Disaggregated", value=p.layout, detail=verdict))
    return steps


# ---- training --------------------------------------------------------------------------------------------------


_STEP_WORDS = {1.0: "whole seconds", 60.0: "whole minutes", 3600.0: "whole hours"}


def _billed(o: Offer, wall: float, spot: float, billed: Term) -> Calc:
    """Hours billed: the wall time (x the spot restarts), rounded to the offer's increment, at least its minimum."""
    terms = [hours(wall)] + ([num(1 + spot, "for spot restarts")] if o.interruptible else [])
    inc = o.billing_increment_s or 1.0  # none stated: per second (pricing/billing.py)
    return Calc(
        terms=terms,
        result=billed,
        step=inc / SECONDS_PER_HOUR,
        step_text=_STEP_WORDS.get(inc, f"{inc:,g}-second increments"),
        rounding="down" if o.partial_increment_rounding == "down" else "up",
        at_least=None if not o.min_billed_s else hours(o.min_billed_s / SECONDS_PER_HOUR),
    )


def why_training(scenario: Scenario | TrainingAsk, c: TrainingCandidate, summary: dict) -> list[WhyStep]:
    """Compute -> GPUs (and how the count was chosen) -> the layout searched (what else was tried and why the pick
    won, training_tried.search_step) -> GPU-hours -> wall time -> machines -> price per hour ->
    hours billed -> cost. ``scenario``: the question's TrainingAsk (a Scenario is read as its ask)."""
    ask = TrainingAsk.of(scenario)
    o, gpu = c.offer, get_gpu(c.gpu)
    flops, tokens = summary["training_flops"], summary["training_tokens"]
    factor = training_flops_factor(ask.method)
    peak = gpu.dense_peak_flops("bf16")[0]
    over = f", coupled over {network_text(o)}" if c.nodes > 1 else ""
    how = "predicted for this layout" if c.step is not None else "as you set it"
    flops_t = rounded(flops, "FLOPs")
    price, per_hour = _price_per_hour(o, c.gpus)
    rc = run_cost(
        o, c.gpus, c.wall_hours * SECONDS_PER_HOUR, ask.pricing.spot_restart_overhead, ask.pricing.hours_per_month
    )
    billed_h = rc.billed_s / SECONDS_PER_HOUR
    rate = per_hour * (1 + ask.training.overhead_factor)  # what an hour billed adds to the cost
    # hours billed differ from the wall time (spot restarts, increments, minimums): a step of their own, to the
    # precision the cost needs; else the wall time is printed to that precision
    billed = o.interruptible or hours(billed_h).text != hours(c.wall_hours).text
    wall_t = hours(c.wall_hours) if billed else hours_into(c.wall_hours, rate, c.run_cost_usd)
    gh_t = hours(c.gpu_hours, "") if billed else hours_into(c.gpu_hours, rate / c.gpus, c.run_cost_usd, "")
    gh_in = gh_t.model_copy(update={"text": f"{gh_t.text} GPU-hours"})
    hours_t = hours_into(billed_h, rate, c.run_cost_usd) if billed else wall_t
    steps = [
        WhyStep.of(
            "Training compute",
            Calc(terms=[num(tokens, "tokens"), rounded(flops / tokens, "FLOPs per token")], result=flops_t),
            f"{factor} x (active parameters + layers x sequence x attention width)",
        ),
        WhyStep(
            label="GPUs",
            value=f"{c.gpus:,}",
            detail=f"{c.count_reason}; TP {c.tp} x PP {c.pp} x {c.replicas:,} data-parallel, ZeRO-{c.zero_stage}",
        ),
        *([searched] if (searched := search_step(c)) is not None else []),
        WhyStep.of(
            "GPU-hours",
            Calc(
                terms=[
                    flops_t,
                    num(peak, "TFLOP/s", scale=1e12, op="/"),
                    num(c.mfu, "MFU", op="/"),
                    num(SECONDS_PER_HOUR, "s per hour", op="/"),
                ],
                result=gh_t,
            ),
            f"dense BF16 peak; MFU {how}",
        ),
        WhyStep.of("Wall time", Calc(terms=[gh_in, num(c.gpus, _n(c.gpus, "GPU"), op="/")], result=wall_t)),
        WhyStep(
            label="Machines",
            value=f"{c.nodes:,}",
            detail=f"{c.gpus:,} {_n(c.gpus, 'GPU')}, up to {o.machine_gpus} in one machine of this offer{over}",
        ),
        WhyStep.of("Price per hour", Calc(terms=price, result=num(per_hour, "USD/hour")), f"{o.provider} {o.product}"),
    ]
    if billed:
        steps.append(WhyStep.of("Hours billed", _billed(o, c.wall_hours, ask.pricing.spot_restart_overhead, hours_t)))
    overhead = num(1 + ask.training.overhead_factor, "for failed runs and sweeps")
    committed = o.commitment_months and rc.run_cost_usd > per_hour * billed_h * (1 + 1e-9)
    if committed:  # a reservation longer than the run is paid in full
        terms = [
            num(per_hour, "USD/hour"),
            num(o.commitment_months, _n(o.commitment_months, "month")),
            num(ask.pricing.hours_per_month, "h a month"),
            overhead,
        ]
        note = "the reservation is paid whether used or not"
    else:
        terms = [num(per_hour, "USD/hour"), hours_t, overhead]
        note = ""
    steps.append(WhyStep.of("Cost of the run", Calc(terms=terms, result=money(c.run_cost_usd)), note))
    return steps


# ---- energy ----------------------------------------------------------------------------------------------------


def _hours_term(run_hours: float | Term, training: bool) -> Term:
    if isinstance(run_hours, Term):
        return run_hours.model_copy(update={"op": "x"})
    return hours(run_hours) if training else num(run_hours, "h a month")


def why_energy(e: EnergyReport | None, run_hours: float | Term) -> list[WhyStep]:
    """kWh from the busy GPUs, the hours (the run's wall time as its step printed it, or a month), watts and PUE;
    then its cost and CO2."""
    if e is None:
        return []
    training = e.phase == "training"
    kwh, usd_, kg = (
        (e.energy_kwh, e.energy_cost_usd, e.co2_kg)
        if training
        else (e.monthly_energy_kwh, e.monthly_energy_cost_usd, e.monthly_co2_kg)
    )
    when = "" if training else " a month"
    kwh_t = rounded(kwh, "kWh")
    watts = f"{e.power_fraction:.0%} of TDP" + (
        f" + {e.host_watts_per_gpu:,.0f} W host" if e.host_watts_per_gpu else ""
    )
    watts += " per GPU"
    per = e.energy_kwh_per_million_output_tokens
    energy = Calc(
        terms=[
            num(e.gpus, _n(e.gpus, "GPU")),
            _hours_term(run_hours, training),
            num(e.power_watts_per_gpu, "W"),
            num(e.pue, "PUE"),
            num(1000, "W per kW", op="/"),
        ],
        result=kwh_t,
    )
    site = e.region_label
    grams = kg * 1000
    co2 = [kwh_t, num(e.grid_gco2_per_kwh, "g CO2/kWh")] + (
        [num(1e6, "g per t", op="/")] if kg >= 1000 else [num(1000, "g per kg", op="/")]
    )
    co2_t = rounded(grams / 1e6, "t CO2") if kg >= 1000 else rounded(kg, "kg CO2")
    return [
        WhyStep.of(f"Energy{when}", energy, watts + (f"; {per:.3g} kWh per 1M output tokens" if per else "")),
        WhyStep.of(
            f"Energy cost{when}",
            Calc(terms=[kwh_t, num(e.electricity_usd_per_kwh, "USD/kWh")], result=money(usd_)),
            site if e.electricity_price_published else f"{site}; {e.electricity_price_note}",
        ),
        WhyStep.of(f"CO2{when}", Calc(terms=co2, result=co2_t), site),
    ]
