"""Each page's answer in one plain sentence, with at most four headline numbers, built from the reports.

What a product manager reads first (and what the meeting view and the forwarded report keep): no jargon without
its plain meaning, every number from a report, formatted by ``text.py``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from ..common.text import count, gb, ms, pct, rate, usd
from ..scenario.scenario import Scenario
from .cost import CostReport
from .results import GpuPerf, MemoryReport, NoFit
from .serving import ServingCurve


class Headline(BaseModel):
    label: str
    value: str
    help: str | None = None
    delta: str | None = Field(None, description="a change to show beside the value (Compare: B against A)")
    lower_is_better: bool = True


def gpus_text(gpu: str, count_: int, machines: int = 1, replicas: int = 1) -> str:
    """'one RTX 3090 24GB', '2 x H100 SXM', '3 copies of 8 x H200 on 3 machines': a layout in plain words."""
    from ..hardware.catalog import get_gpu

    label = get_gpu(gpu).label
    per = count_ // max(1, replicas)
    one = f"one {label}" if per == 1 else f"{per} x {label}"
    if replicas > 1:
        return f"{replicas} copies of {one}" + (f" on {machines} machines" if machines > 1 else "")
    return one + (f" on {machines} machines" if machines > 1 else "")


class Answer(BaseModel):
    sentence: str
    headlines: list[Headline] = Field(default_factory=list, max_length=4)
    tone: Literal["good", "warn", "info"] = "info"


def _job(sc: Scenario) -> str:
    if sc.mode == "inference":
        return f"{sc.input_tokens:,} + {sc.output_tokens:,} tokens per request"
    what = {"full": "full fine-tuning", "lora": "LoRA", "qlora": "QLoRA"}.get(sc.method, sc.method)
    return f"{'pre-training' if sc.mode == 'training' else what}, {sc.sequence_tokens:,}-token sequences"


def memory_answer(mem: MemoryReport, sc: Scenario) -> Answer:
    """How much memory one GPU needs, and which GPUs hold it (the selected one, or every type)."""
    need, n = mem.per_gpu_bytes, mem.layout.gpus
    at = f" at {n} GPUs" if n > 1 else ""
    head = f"{mem.model} needs {gb(need)} per GPU{at} ({_job(sc)}, batch {mem.batch})"
    fitting = [g for g in mem.gpus if g.fits]
    if sc.gpu:
        g = next(x for x in mem.gpus if x.selected)
        if g.fits:
            sentence = (
                f"{head}: {n} x {g.label} hold{'s' if n == 1 else ''} it with {gb(g.budget_bytes - need)} to spare."
            )
            tone = "good"
        else:
            short = f"{gb(need - g.budget_bytes)} short"
            more = f"; it takes {g.min_gpus:,} x {g.label}" if g.min_gpus else "; no layout of up to 4,096 holds it"
            sentence, tone = f"{head}: {n} x {g.label} is {short}{more}.", "warn"
        fit_line = Headline(label=f"Fits {n} x {g.label}?", value="yes" if g.fits else "no")
    elif fitting:
        smallest = min(fitting, key=lambda g: g.budget_bytes)
        sentence = (
            f"{head}: {len(fitting)} of {len(mem.gpus)} GPU types hold it; the smallest is the {smallest.label} "
            f"({gb(smallest.budget_bytes)} usable)."
        )
        tone = "good"
        fit_line = Headline(label="GPU types that hold it", value=f"{len(fitting)} of {len(mem.gpus)}")
    else:
        fewest = min((g for g in mem.gpus if g.min_gpus), key=lambda g: g.min_gpus or 0, default=None)
        more = f"the fewest are {fewest.min_gpus:,} x {fewest.label}" if fewest else "no layout up to 4,096 does"
        sentence, tone = f"{head}: no single GPU type holds it at this layout; {more}.", "warn"
        fit_line = Headline(label="GPU types that hold it", value=f"0 of {len(mem.gpus)}")
    heads = [
        Headline(label="Memory per GPU", value=gb(need), help="Everything one GPU holds (whole runtime), GB = 10^9 B"),
        fit_line,
        Headline(label="Weights", value=gb(mem.weights_bytes_total), help="The model's weights, all GPUs together"),
    ]
    if mem.mode == "inference":
        kv = mem.kv_cache_bytes_per_token * mem.context_tokens
        heads.append(
            Headline(
                label="KV cache per request",
                value=gb(kv, 2),
                help="The attention keys and values a request keeps for every token of its context (the 'KV cache')",
            )
        )
    else:
        heads.append(Headline(label="Model states per GPU", value=gb(mem.budgets.get("model states"))))
    return Answer(sentence=sentence, headlines=heads, tone=tone)


def perf_answer(p: GpuPerf | NoFit, curve: ServingCurve | None, sc: Scenario) -> Answer:
    """How fast one request is on the chosen GPU, and how much traffic one copy of the model serves."""
    if isinstance(p, NoFit):
        return Answer(sentence=p.notes[0], tone="warn")
    where = gpus_text(p.gpu, p.gpu_count)
    per_user = p.decode_tokens_per_s_per_sequence
    band = p.error_band.tpot_s
    sure = f", typically within ±{band.band:.0%}" if band.points else ", a roofline estimate"
    users = "the user" if p.batch == 1 else f"each of {p.batch:,} users"
    sentence = (
        f"On {where} the first token arrives after {ms(p.ttft_s)} and {users} then gets {rate(per_user)} "
        f"({ms(p.tpot_s)} per token{sure})"
    )
    heads = [
        Headline(
            label="Time to first token",
            value=ms(p.ttft_s),
            help="TTFT: the wait before the answer starts (the prompt is read in one 'prefill' pass)",
        ),
        Headline(
            label="Tokens/s per user",
            value=rate(per_user, ""),
            help=f"How fast the answer streams once started; time per output token (TPOT) {ms(p.tpot_s)}",
        ),
    ]
    cap = None if curve is None else curve.capacity_requests_per_s or curve.max_requests_per_s
    if cap:
        what = "within your latency targets" if curve.capacity_requests_per_s else "before it saturates"
        sentence += f"; one copy of the model serves {rate(cap, 'requests/s')} {what}"
        heads.append(
            Headline(
                label="Requests/s per replica",
                value=rate(cap, ""),
                help="One copy of the model (a replica) with continuous batching, " + what,
            )
        )
        if curve.replicas:
            heads.append(Headline(label="Replicas for your traffic", value=f"{curve.replicas:,}"))
    if len(heads) < 4:
        heads.append(
            Headline(label="Largest batch that fits", value=f"{p.max_batch:,}", help="Requests decoded together")
        )
    return Answer(sentence=sentence + ".", headlines=heads[:4], tone="info")


def cost_answer(cost: CostReport, sc: Scenario) -> Answer:
    """The cheapest way to run it: always-on per month (serving) or one run (training)."""
    rows = cost.offers
    if not rows:
        return Answer(sentence="No offer matches the pricing filters for a GPU this model fits.", tone="warn")
    if sc.mode == "inference":
        best = min(rows, key=lambda r: r.monthly_always_on_usd)
        mine = " (your price)" if best.user_price else ""
        what = gpus_text(best.gpu, best.tp * best.pp * best.replicas, replicas=best.replicas)
        sentence = (
            f"The cheapest always-on option is {what} from {best.provider}{mine} at "
            f"{usd(best.monthly_always_on_usd)} a month, {usd(best.output_cost_per_million_usd)} per million "
            f"output tokens at {pct(sc.utilization)} utilization."
        )
        cheapest_run = min(rows, key=lambda r: r.run_cost_usd)
        heads = [
            Headline(label="Cheapest per month", value=usd(best.monthly_always_on_usd), help=best.offer_id),
            Headline(label="Per 1M output tokens", value=usd(best.output_cost_per_million_usd)),
            Headline(
                label="Cheapest per run",
                value=usd(cheapest_run.run_cost_usd),
                help=f"{cheapest_run.run_description} on {cheapest_run.offer_id}",
            ),
            Headline(label="Offers compared", value=f"{len(rows):,}"),
        ]
        return Answer(sentence=sentence, headlines=heads, tone="good")
    best = min(rows, key=lambda r: r.run_cost_usd)
    sentence = (
        f"The cheapest training run rents {best.gpus:,} x {best.gpu} from {best.provider}: "
        f"{usd(best.run_cost_usd)} over {best.wall_hours:,.0f} hours."
    )
    heads = [
        Headline(label="Cheapest run", value=usd(best.run_cost_usd), help=best.offer_id),
        Headline(label="Wall-clock time", value=f"{best.wall_hours:,.0f} h"),
        Headline(label="GPU-hours", value=count(best.gpu_hours)),
        Headline(label="Offers compared", value=f"{len(rows):,}"),
    ]
    return Answer(sentence=sentence, headlines=heads, tone="good")


def plan_answer(plan, mem: MemoryReport, sc: Scenario) -> Answer:
    """The recommendation in a sentence: what to rent, how many, what it costs, and why it qualifies."""
    if not plan.picks:
        return Answer(sentence=plan.message or "No configuration fits and meets the targets.", tone="warn")
    top = plan.picks[0]
    cost = top.monthly_usd if top.monthly_usd is not None else top.run_cost_usd
    per = "a month" if top.monthly_usd is not None else "for the run"
    what = gpus_text(top.gpu, top.tp * top.pp * top.replicas, top.nodes, top.replicas)
    mine = " at your price" if top.user_price else ""
    if sc.mode != "inference":
        why = f", done in {top.wall_hours:,.0f} hours" if top.wall_hours else ""
    elif sc.requests_per_day:
        why = f": it serves {sc.requests_per_day:,.0f} requests a day within your latency targets"
    elif sc.ttft_target_s or sc.tpot_target_s:
        why = ": the cheapest that fits and meets your latency targets"
    else:
        why = ": the cheapest that fits"
    sentence = f"Rent {what} from {top.provider}{mine} for {usd(cost)} {per}{why}."
    heads = [Headline(label="Cost " + ("per month" if top.monthly_usd is not None else "of the run"), value=usd(cost))]
    heads.append(Headline(label="GPUs", value=f"{top.gpus:,}", help=f"{top.nodes} machine(s)"))
    if top.ttft_s is not None:
        heads.append(
            Headline(
                label="First token (p95)" if sc.requests_per_day else "First token",
                value=ms(top.ttft_s),
                help=f"Time to first token; how sure: {top.error_band}",
            )
        )
    elif top.wall_hours is not None:
        heads.append(Headline(label="Wall-clock time", value=f"{top.wall_hours:,.0f} h"))
    heads.append(Headline(label="Memory per GPU", value=gb(mem.per_gpu_bytes), help="at the scenario's layout"))
    return Answer(sentence=sentence, headlines=heads, tone="good")


# ---- Compare ------------------------------------------------------------------------------------------------


class Side(BaseModel):
    """One scenario of a comparison: what it needs and, when it fits, what it does and costs."""

    label: str
    fits: bool
    per_gpu_bytes: float
    ttft_s: float | None = None
    tpot_s: float | None = None
    monthly_usd: float | None = None
    per_million_usd: float | None = None
    run_usd: float | None = None
    needs: str | None = Field(None, description="when it does not fit: what it would take")


class Difference(BaseModel):
    metric: str
    a: str
    b: str
    change: str  # "B - A" with its unit, or "n/a"
    change_pct: str


class Comparison(BaseModel):
    verdict: str
    rows: list[Difference]
    identical: bool


def _diff(metric: str, a: float | None, b: float | None, show) -> Difference:
    if a is None or b is None:
        return Difference(
            metric=metric,
            a=show(a) if a is not None else "n/a",
            b=show(b) if b is not None else "n/a",
            change="n/a",
            change_pct="n/a",
        )
    d = b - a
    sign = "+" if d > 0 else "-" if d < 0 else ""
    return Difference(
        metric=metric,
        a=show(a),
        b=show(b),
        change=sign + show(abs(d)) if d else "0",
        change_pct=f"{d / a:+.0%}" if a else "n/a",
    )


def compare(a: Side, b: Side) -> Comparison:
    """Differences B - A (absolute and %) and a one-line verdict; a side that does not fit shows no price."""
    rows = [
        _diff("Memory per GPU", a.per_gpu_bytes, b.per_gpu_bytes, gb),
        Difference(
            metric="Fits",
            a="yes" if a.fits else "no",
            b="yes" if b.fits else "no",
            change="same" if a.fits == b.fits else "differs",
            change_pct="n/a",
        ),
        _diff("Time to first token", a.ttft_s, b.ttft_s, ms),
        _diff("Time per output token", a.tpot_s, b.tpot_s, ms),
        _diff("Cost per month", a.monthly_usd, b.monthly_usd, usd),
        _diff("Cost per 1M output tokens", a.per_million_usd, b.per_million_usd, usd),
        _diff("Cost of the training run", a.run_usd, b.run_usd, usd),
    ]
    rows = [r for r in rows if not (r.a == "n/a" and r.b == "n/a")]
    same = all(r.change in ("0", "same", "n/a") for r in rows) and a.fits == b.fits
    if same:
        return Comparison(verdict="A and B are identical: every number is the same.", rows=rows, identical=True)
    parts = []
    for x, y, per in ((a.monthly_usd, b.monthly_usd, "per month"), (a.run_usd, b.run_usd, "per run")):
        if x and y and x != y:
            r = y / x - 1
            parts.append(f"B is {abs(r):.0%} {'cheaper' if r < 0 else 'more expensive'} {per}")
    if a.tpot_s and b.tpot_s and abs(b.tpot_s / a.tpot_s - 1) >= 0.005:
        x = a.tpot_s / b.tpot_s
        parts.append(f"{x:.1f}x faster per token" if x > 1 else f"{1 / x:.1f}x slower per token")
    if not parts and a.per_gpu_bytes != b.per_gpu_bytes:
        r = b.per_gpu_bytes / a.per_gpu_bytes - 1
        parts.append(f"B needs {abs(r):.0%} {'less' if r < 0 else 'more'} memory per GPU")
    fits = (
        "both fit"
        if a.fits and b.fits
        else "neither fits"
        if not (a.fits or b.fits)
        else f"only {'A' if a.fits else 'B'} fits ({'B' if a.fits else 'A'} needs {(b if a.fits else a).needs})"
    )
    first = " and ".join(parts) if parts else "A and B differ only in settings that do not change these numbers"
    if parts and not first.startswith("B"):
        first = "B is " + first
    return Comparison(verdict=f"{first}; {fits}.", rows=rows, identical=False)


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
