"""Each page's answer in one plain sentence, with at most four headline numbers, built from the reports.

What a product manager reads first (and what the meeting view and the forwarded report keep): no jargon without
its plain meaning, every number from a report, formatted by ``text.py``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from ..common.text import counted, figure, gb, ms, pct, rate, usd
from ..plan.answer import Targets, checks_of
from ..pricing.billing import training_flops_factor
from ..results.answer import ScenarioAnswer
from ..results.perf import GpuPerf, NoFit
from ..results.serving import ServingCurve
from ..scenario.scenario import Scenario


class Headline(BaseModel):
    label: str
    value: str
    help: str | None = None
    delta: str | None = Field(None, description="a change to show beside the value (Compare: B against A)")
    lower_is_better: bool = True


def terms_text(billing_model: str) -> str:
    """How the offer bills, where it is not plain on-demand: ' (spot)', ' (reserved)', ' (serverless-flex)'."""
    return "" if billing_model == "on_demand" else f" ({billing_model.replace('_', '-')})"


def gpus_text(gpu: str, count_: int, machines: int = 1, replicas: int = 1) -> str:
    """What to rent in plain words, machines named as machines: 'one RTX 3090 24GB', '8 x H100 SXM',
    '8 machines of 8 x H100 SXM', '3 machines of 8 x H200 (a copy of the model on each)', '4 machines of 8 x H200
    (2 copies of the model, 16 GPUs each)', '68 x H100 SXM on 9 machines'.

    Copies of the model (``replicas``: serving replicas, a training job's data-parallel ranks) are named only where
    each is a whole machine or more; where several share a machine, the GPUs and machines say what to rent and the
    layout says the rest."""
    from ..hardware.catalog import get_gpu

    label = get_gpu(gpu).label
    if machines <= 1:
        return f"one {label}" if count_ == 1 else f"{count_:,} x {label}"
    if count_ % machines:
        return f"{count_:,} x {label} on {machines:,} machines"
    per, k = count_ // max(1, replicas), count_ // machines
    rent = f"{machines:,} machines of " + (f"one {label}" if k == 1 else f"{k} x {label}")
    if replicas > 1 and per == k:
        return f"{rent} (a copy of the model on each)"
    if replicas > 1 and per > k:
        return f"{rent} ({replicas:,} copies of the model, {counted(per, 'GPU')} each)"
    return rent


class Answer(BaseModel):
    sentence: str
    headlines: list[Headline] = Field(default_factory=list, max_length=4)
    tone: Literal["good", "warn", "info"] = "info"


def _job(sc: Scenario) -> str:
    if sc.job.mode == "inference":
        return f"{sc.request.input_tokens:,} + {sc.request.output_tokens:,} tokens per request"
    what = {"full": "full fine-tuning", "lora": "LoRA", "qlora": "QLoRA"}.get(sc.job.method, sc.job.method)
    return f"{'pre-training' if sc.job.mode == 'training' else what}, {sc.request.sequence_tokens:,}-token sequences"


def perf_answer(
    p: GpuPerf | NoFit, curve: ServingCurve | None, sc: Scenario, ans: ScenarioAnswer | None = None
) -> Answer:
    """How fast it is, and how much traffic one copy of the model serves. With ``ans`` (the page shows the
    recommended layout) and a traffic estimate, the figures are the answer's: p95 first token and time per token at
    the peak over its replicas. Otherwise one request's. Every target the scenario sets is checked against the
    figures shown: never "within your targets" for a latency above them."""
    if isinstance(p, NoFit):
        return Answer(sentence=p.notes[0], tone="warn")
    where = gpus_text(p.gpu, p.gpu_count)
    band = p.error_band.tpot_s
    sure = f", typically within ±{band.band:.0%}" if band.points else ", a roofline estimate"
    pick = ans.pick if ans is not None else None
    at_peak = pick is not None and pick.ttft_s is not None and pick.tpot_s and sc.traffic.requests_per_day
    if at_peak and pick.disaggregated is not None:  # its pools, not one aggregated copy, serve the peak
        where, curve = f"the split {pick.layout.removeprefix('P/D: ')}", None
    if at_peak:
        ttft, tpot, checks = pick.ttft_s, pick.tpot_s, ans.checks
        sentence = (
            f"On {where}, the recommended layout, 95% of first tokens arrive within {ms(ttft)} at your peak traffic "
            f"and each user then gets {rate(1 / tpot)} ({ms(tpot)} per token{sure})"
        )
        ttft_label, ttft_help = "First token (p95 at peak)", "The wait before the answer starts, for 95% of requests"
    else:
        ttft, tpot = p.ttft_s, p.tpot_s
        checks = checks_of(Targets.of(sc), ttft, tpot)
        users = "the user" if p.batch == 1 else f"each of {p.batch:,} users"
        sentence = (
            f"On {where} the first token arrives after {ms(ttft)} and {users} then gets "
            f"{rate(p.decode_tokens_per_s_per_sequence)} ({ms(tpot)} per token{sure})"
        )
        ttft_label, ttft_help = "Time to first token", "TTFT: the wait before the answer starts (one 'prefill' pass)"
    missed = [c for c in checks if not c.met]
    if missed:
        alone = "" if at_peak or p.batch == 1 else f" (a static batch of {p.batch:,} prompts read at once)"
        sentence += "; that " + " and ".join(c.text() for c in missed) + alone
    elif checks:
        sentence += ": within your targets (" + ", ".join(c.target_text() for c in checks) + ")"
    heads = [
        Headline(label=ttft_label, value=ms(ttft), help=ttft_help),
        Headline(
            label="Tokens/s per user",
            value=rate(1 / tpot if at_peak else p.decode_tokens_per_s_per_sequence, ""),
            help=f"How fast the answer streams once started; time per output token (TPOT) {ms(tpot)}",
        ),
    ]
    cap = None if curve is None else curve.capacity_requests_per_s
    if curve is not None and cap == 0:
        sentence += "; no load on one copy of the model meets your latency targets"
    elif curve is not None:
        what = (
            ("within your latency targets" if not checks else "within those targets") if cap else "before it saturates"
        )
        cap = cap or curve.max_requests_per_s
        sentence += f"; one copy of the model serves {rate(cap, 'requests/s')} {what}"
        heads.append(
            Headline(
                label="Requests/s per replica",
                value=rate(cap, ""),
                help="One copy of the model (a replica) with continuous batching, " + what,
            )
        )
        replicas = pick.replicas if at_peak else curve.replicas
        if replicas:
            heads.append(Headline(label="Replicas for your traffic", value=f"{replicas:,}"))
    if len(heads) < 4:
        heads.append(
            Headline(label="Largest batch that fits", value=f"{p.max_batch:,}", help="Requests decoded together")
        )
    return Answer(sentence=sentence + ".", headlines=heads[:4], tone="warn" if missed else "info")


def cost_answer(ans: ScenarioAnswer, sc: Scenario, offers_compared: int) -> Answer:
    """The cheapest way to run it: the one answer's pick and cost, then the cheapest always-on and per-run options,
    each labelled with how it differs from the answer. An option that misses a target is never headlined."""
    if ans.pick is None:
        alt = ", ".join(f"the {o.role} ({o.pick.offer_id}) {o.differs}" for o in ans.alternatives)
        msg = ans.message or "No offer matches the pricing filters for a GPU this model fits."
        return Answer(sentence=msg + (f" Of those priced, {alt}." if alt else ""), tone="warn")
    top = ans.pick
    mine = " (your price)" if top.user_price else ""
    what = gpus_text(top.gpu, top.running_gpus, top.nodes, 1 if top.disaggregated else top.replicas)
    meets = " that meets your targets" if ans.checks else ""
    by = {o.role: o for o in ans.alternatives}
    if sc.job.mode == "inference":
        billing = top.billing_model.replace("_", "-")
        sentence = (
            f"The cheapest option{meets} is {what} from {top.provider}{mine} ({billing}) at {usd(ans.cost_usd)} a month"
        )
        if top.output_cost_per_million_usd is not None:
            per_m = usd(top.output_cost_per_million_usd)
            sentence += f", {per_m} per million output tokens at {pct(sc.pricing.utilization)} utilization"
        always = by.get("cheapest always-on")
        if always is not None and always.pick.offer_id != top.offer_id:
            sentence += f"; the cheapest always-on is {usd(always.pick.monthly_usd)} a month ({always.differs})"
        heads = [Headline(label="Cheapest per month", value=usd(ans.cost_usd), help=f"{top.offer_id}: the answer")]
        if always is not None:
            heads.append(
                Headline(
                    label="Cheapest always-on",
                    value=usd(always.pick.monthly_usd),
                    help=f"{always.pick.offer_id}: {always.differs}",
                )
            )
        run = by.get("cheapest per run")
        if run is not None:
            heads.append(
                Headline(
                    label="Cheapest per run",
                    value=usd(run.pick.run_cost_usd),
                    help=f"{run.pick.offer_id}: {run.differs}",
                )
            )
        heads.append(Headline(label="Offers compared", value=f"{offers_compared:,}"))
        return Answer(sentence=sentence + ".", headlines=heads[:4], tone="good")
    sentence = (
        f"The cheapest training run{meets} rents {what} from {top.provider}{terms_text(top.billing_model)}{mine}: "
        f"{usd(ans.cost_usd)} over "
        f"{figure(top.wall_hours)} hours."
    )
    heads = [
        Headline(label="Cheapest run", value=usd(ans.cost_usd), help=f"{top.offer_id}: the answer"),
        Headline(label="Wall-clock time", value=f"{figure(top.wall_hours)} h"),
        Headline(label="GPUs", value=f"{top.gpus:,}", help=f"{top.nodes:,} machine{'' if top.nodes == 1 else 's'}"),
        Headline(label="Offers compared", value=f"{offers_compared:,}"),
    ]
    return Answer(sentence=sentence, headlines=heads, tone="good")


def plan_answer(ans: ScenarioAnswer, sc: Scenario) -> Answer:
    """The recommendation in a sentence: what to rent, how many, what it costs, and why it qualifies. Every number
    is the one answer's (plan/answer.py): the pick, its cost, its targets, memory per GPU at its layout."""
    top = ans.pick
    if top is None:
        return Answer(sentence=ans.message or "No configuration fits and meets the targets.", tone="warn")
    per = "a month" if ans.cost_per == "month" else "for the run"
    what = gpus_text(top.gpu, top.running_gpus, top.nodes, 1 if top.disaggregated else top.replicas)
    mine = " at your price" if top.user_price else ""
    if sc.job.mode != "inference":
        why = f", done in {figure(top.wall_hours)} hours" if top.wall_hours else ""
    elif sc.traffic.requests_per_day and ans.checks:
        why = f": it serves {sc.traffic.requests_per_day:,.0f} requests a day within your latency targets"
    elif sc.traffic.requests_per_day:
        why = f": it serves {sc.traffic.requests_per_day:,.0f} requests a day"
    elif ans.checks:
        why = ": the cheapest that fits and meets your latency targets"
    else:
        why = ": the cheapest that fits"
    sentence = (
        f"Rent {what} from {top.provider}{terms_text(top.billing_model)}{mine} for {usd(ans.cost_usd)} {per}{why}."
    )
    heads = [
        Headline(label="Cost " + ("per month" if ans.cost_per == "month" else "of the run"), value=usd(ans.cost_usd))
    ]
    heads.append(
        Headline(label="GPUs", value=f"{top.gpus:,}", help=f"{top.nodes:,} machine{'' if top.nodes == 1 else 's'}")
    )
    if top.ttft_s is not None:
        heads.append(
            Headline(
                label="First token (p95)" if sc.traffic.requests_per_day else "First token",
                value=ms(top.ttft_s),
                help=f"Time to first token; how sure: {top.error_band}",
            )
        )
    elif top.wall_hours is not None:
        heads.append(Headline(label="Wall-clock time", value=f"{figure(top.wall_hours)} h"))
    heads.append(Headline(label=memory_label(ans), value=gb(ans.memory_per_gpu_bytes), help=_memory_help(ans)))
    return Answer(sentence=sentence, headlines=heads, tone="good")


def memory_label(ans: ScenarioAnswer) -> str:
    """The answer's memory headline: 'Memory per GPU', a split's '(decode worker)' added (the figure is one GPU of a
    decode worker; the prefill worker's is in ``memory_pools``)."""
    return "Memory per GPU" + (" (decode worker)" if ans.memory_pools else "")


def _memory_help(ans: ScenarioAnswer) -> str:
    """What the memory figure is of, in words; a split's both pools."""
    if not ans.memory_pools:
        return f"What each GPU holds at the recommended layout ({ans.memory_layout}), GB = 10^9 B"
    pre, dec = ans.memory_pools
    return (
        f"What one GPU of a decode worker ({dec.layout}) holds; one GPU of a prefill worker ({pre.layout}) holds "
        f"{gb(pre.per_gpu_bytes)} (the Memory page has both), GB = 10^9 B"
    )


def data_answer(n_gpus: int, offers: list[Any], stale_after_days: int) -> Answer:
    """What the numbers rest on: how many GPU types and offers, from how many providers, how fresh."""
    from ..pricing.offers import price_age_days

    providers = {o.provider for o in offers}
    ages = [a for a in (price_age_days(o.price_as_of) for o in offers) if a is not None]
    stale = sum(a > stale_after_days for a in ages)
    undated = len(offers) - len(ages)
    sentence = (
        f"gpuplan sizes against {n_gpus} GPU types and prices {len(offers):,} offers from {len(providers)} "
        f"providers: {stale} price{'s are' if stale != 1 else ' is'} older than {stale_after_days} days and "
        f"{undated} undated (catalog snapshots), each with its source below."
    )
    heads = [
        Headline(label="GPU types", value=f"{n_gpus}"),
        Headline(label="Offers", value=f"{len(offers):,}"),
        Headline(label="Providers", value=f"{len(providers)}"),
        Headline(label="Oldest dated price", value=f"{max(ages):,} days" if ages else "n/a"),
    ]
    return Answer(sentence=sentence, headlines=heads, tone="info")


METHODOLOGY_ANSWER = Answer(
    sentence="Every number in gpuplan comes from the formulas and sources on this page, and every estimate says how "
    "far to trust it.",
    tone="info",
)


def training_compute_line(sc: Scenario, training_flops: float) -> str:
    """How the run's FLOPs are counted and priced, with the factor the engine uses for the method (6 for full
    training, 4 for LoRA / QLoRA: ``pricing.billing.training_flops_factor``)."""
    factor = training_flops_factor(sc.job.training_method)
    frozen = "" if factor == 6 else " (4, not 6: the frozen base computes no weight gradients)"
    how = "your MFU" if sc.training.mfu else "the MFU predicted for each offer's layout and network"
    return (
        f"Training compute: **{training_flops:.3g} FLOPs** = tokens x ({factor} x active parameters + causal "
        f"attention){frozen}, at {how} of each GPU's dense BF16 peak; +{sc.training.overhead_factor:.0%} for "
        "failed runs and sweeps; GPUs rounded up to whole nodes, billed in each offer's increments."
    )


def training_speed_line(ans: ScenarioAnswer) -> str | None:
    """The answer's training speed in one sentence: the MFU it uses (predicted with its band, or the user's), the
    tokens per second per GPU, the wall time with its band. None without a training pick."""
    p = ans.pick
    if p is None or p.mfu is None or p.wall_hours is None:
        return None
    where = f"{p.gpus:,} x {p.gpu} (TP {p.tp}, PP {p.pp}, ZeRO-{p.zero_stage})"
    if not p.mfu_predicted:
        return f"Run time at your MFU of {p.mfu:.2f} on {where}: {p.wall_hours:,.1f} h."
    lo, hi = p.wall_hours * p.mfu / p.mfu_high, p.wall_hours * p.mfu / p.mfu_low
    return (
        f"Predicted MFU **{p.mfu:.2f}** (band {p.mfu_low:.2f}-{p.mfu_high:.2f}: four in five held-out published runs "
        f"fall inside it) on {where}: {p.tokens_per_s_per_gpu:,.0f} tokens/s per GPU, **{p.wall_hours:,.1f} h** "
        f"wall time ({lo:,.1f}-{hi:,.1f} h). Set an MFU in the sidebar to override the prediction."
    )


def site_answer(ans: ScenarioAnswer) -> Answer | None:
    """The answer's energy, carbon and owning in one sentence and four numbers (None without a pick)."""
    e, o = ans.energy, ans.own
    if e is None:
        return None
    where = f"in {e.region_label} (PUE {e.pue:.2f}, {e.grid_gco2_per_kwh:,.0f} g CO2/kWh)"
    if e.phase == "training":
        sentence = (
            f"The run draws {e.energy_kwh:,.0f} kWh {where}: {usd(e.energy_cost_usd)} of electricity and "
            f"{e.co2_kg / 1000:,.1f} t of CO2"
        )
        heads = [
            Headline(label="Energy of the run", value=f"{e.energy_kwh:,.0f} kWh"),
            Headline(label="CO2", value=f"{e.co2_kg / 1000:,.1f} t"),
        ]
    else:
        per = e.energy_kwh_per_million_output_tokens
        sentence = (
            f"Serving draws {e.monthly_energy_kwh:,.0f} kWh a month {where}: {usd(e.monthly_energy_cost_usd)} of "
            f"electricity and {e.monthly_co2_kg / 1000:,.2f} t of CO2"
            + (f", {per:,.2f} kWh per 1M output tokens" if per else "")
            + (f" (the month's {e.monthly_output_tokens / 1e6:,.1f}M output tokens)" if e.monthly_output_tokens else "")
        )
        heads = [
            Headline(label="Energy a month", value=f"{e.monthly_energy_kwh:,.0f} kWh"),
            Headline(label="CO2 a month", value=f"{e.monthly_co2_kg / 1000:,.2f} t"),
        ]
    if o is not None:
        pays = (
            f"pays back after {o.break_even_months:,.0f} months"
            if o.break_even_months is not None
            else f"does not pay back within {o.amortisation_years:g} years at this use"
        )
        sentence += f"; owning the {counted(o.gpus, 'GPU')} ({usd(o.capex_usd)}) {pays}"
        heads += [
            Headline(label="Owning a month", value=usd(o.monthly_own_usd)),
            Headline(
                label="Break-even",
                value="never" if o.break_even_months is None else f"{o.break_even_months:,.0f} months",
            ),
        ]
    if not e.electricity_price_published:
        sentence += f" ({e.electricity_price_note})"
    return Answer(sentence=sentence + ".", headlines=heads, tone="info")
