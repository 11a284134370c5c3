"""The typed plan: the picks, near misses and rejections, the why-chain and the cost-latency Pareto front.

``recommend.py`` builds it (inference candidates from ``search.py``, training candidates from ``training.py``); the
CLI's JSON is its ``model_dump()``.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field, model_serializer

from ..common.text import exact, figure, usd
from ..pricing.offers import Offer

HOURS_SIG = 4  # hours (GPU-hours, wall, billed) multiply into a cost printed to the cent or the dollar


class Term(BaseModel):
    """One number of the why-chain as the reader sees it: ``text`` starts with the number ("1.074 GPU-hours",
    "$2.59"), ``value`` is the engine's number it stands for (x ``scale``: 2,250 TFLOP/s has scale 1e12), and
    ``exact`` says the text is that number itself (a count, a price, a constant, an input), not a rounding."""

    model_config = ConfigDict(frozen=True)

    text: str
    value: float
    exact: bool = False
    scale: float = 1.0
    op: Literal["x", "/"] = Field("x", description="how it joins the terms before it in a calculation")


def num(x: float, unit: str = "", sig: int = 3, scale: float = 1.0, op: Literal["x", "/"] = "x") -> Term:
    """A term printed exactly where it can be (up to 6 decimals), else rounded to ``sig`` significant figures."""
    shown = exact(x / scale)
    text = _with(shown or figure(x / scale, sig), unit)
    return Term(text=text, value=x, exact=shown is not None, scale=scale, op=op)


def rounded(x: float, unit: str = "", sig: int = 3, op: Literal["x", "/"] = "x") -> Term:
    """A computed number, rounded to ``sig`` significant figures (whole digits kept)."""
    return Term(text=_with(figure(x, sig), unit), value=x, op=op)


def hours(x: float, unit: str = "h", op: Literal["x", "/"] = "x") -> Term:
    return rounded(x, unit, HOURS_SIG, op)


def hours_into(x: float, usd_per_hour: float, cost_usd: float, unit: str = "h") -> Term:
    """Hours that multiply into a cost: to 4 significant figures, or more decimals where the cost prints finer, so
    that the hours' rounding moves the cost by at most half a unit of its printed last digit (``usd``: cents under
    100 USD, else dollars)."""
    half_cost = 0.005 if abs(cost_usd) < 100 else 0.5
    text = figure(x, HOURS_SIG)
    decimals = len(text.partition(".")[2]) if "e" not in text else 0
    while 0.5 * 10**-decimals * abs(usd_per_hour) > half_cost and decimals < 9:
        decimals += 1
    if "e" not in text:
        text = f"{x:,.{decimals}f}"
    return Term(text=_with(text, unit), value=x)


def money(x: float) -> Term:
    """A cost as every headline prints it (common.text.usd)."""
    return Term(text=usd(x), value=x)


def _with(number: str, unit: str) -> str:
    return f"{number} {unit}" if unit else number


class Calc(BaseModel):
    """How a step's value follows from numbers printed before it: the terms joined left to right by their ``op``
    (x, /), then rounded to a multiple of ``step`` (up, or down where the contract says so; ceil: a step of 1),
    then at least ``at_least``. ``text()`` is the formula as the step's detail prints it."""

    model_config = ConfigDict(frozen=True)

    terms: list[Term]
    result: Term
    step: float | None = Field(None, description="rounded to a multiple of this, in the result's unit")
    step_text: str = Field("", description="'whole minutes', 'whole 8-GPU nodes'; empty with a step of 1: ceil()")
    rounding: Literal["up", "down"] = "up"
    at_least: Term | None = None

    def text(self) -> str:
        body = self.terms[0].text + "".join(f" {t.op} {t.text}" for t in self.terms[1:])
        if self.step is not None:
            if self.step_text:
                body += f", rounded {self.rounding} to {self.step_text}"
            else:
                body = f"{'ceil' if self.rounding == 'up' else 'floor'}({body})"
        if self.at_least is not None:
            body += f", at least {self.at_least.text}"
        return body


class WhyStep(BaseModel):
    """One link of the why-chain: a label, its value, and how it follows from the ones before. Where the value is
    arithmetic on numbers the chain prints, ``calc`` holds them and the detail prints the formula from it."""

    model_config = ConfigDict(frozen=True)

    label: str
    value: str
    detail: str = ""
    calc: Calc | None = None

    @classmethod
    def of(cls, label: str, calc: Calc, note: str = "", value: str | None = None) -> WhyStep:
        """A step whose value is ``calc``'s result (or ``value``, which starts with it) and whose detail is the
        formula; then the note."""
        detail = calc.text() + (f"; {note}" if note else "")
        return cls(label=label, value=value or calc.result.text, detail=detail, calc=calc)


def layout_label(gpu: str, tp: int, pp: int, ep: int = 1) -> str:
    """One replica's layout in words: '2 x H100-SXM, TP 2', '16 x H100-SXM, TP 8, PP 2'; a serving replica's expert
    parallel (tp = pp = 1): '8 x H100-SXM, EP 8 (attention DP)'."""
    if ep > 1:
        return f"{ep} x {gpu}, EP {ep} (attention DP)"
    return f"{tp * pp} x {gpu}, TP {tp}" + (f", PP {pp}" if pp > 1 else "")


def replica_split(p: Pick) -> str:
    """How one serving replica splits its GPUs: 'TP 2', 'TP 8, PP 2', 'EP 8, attention DP'; a disaggregated pick's
    pools: 'P/D: 4 prefill TP 1 + 1 decode TP 2'."""
    if (d := p.disaggregated) is not None:
        return f"P/D: {d.prefill.workers} prefill TP {d.prefill.tp} + {d.decode.workers} decode TP {d.decode.tp}"
    if p.replica_gpus > p.tp * p.pp:
        return f"EP {p.replica_gpus}, attention DP"
    return f"TP {p.tp}" + (f", PP {p.pp}" if p.pp > 1 else "")


class PDPool(BaseModel):
    """One pool of a disaggregated (P/D) deployment: ``workers`` copies of one worker's layout, each serving
    ``requests_per_s_per_worker`` within the targets (plan/disaggregated.py)."""

    role: Literal["prefill", "decode"]
    workers: int
    tp: int
    layout: str = Field(description="one worker, e.g. '1 x H100-SXM, TP 1'")
    gpus: int = Field(description="the pool's GPUs at work: workers x tp")
    requests_per_s_per_worker: float


class Disaggregated(BaseModel):
    """A pick's prefill/decode split (perf/disaggregated.py defines each figure): the two pools, the KV cache each
    prompt moves between them and over what, the decode batch and its TPOT, and what the best aggregated pick that
    it beat costs."""

    prefill: PDPool
    decode: PDPool
    kv_transfer_bytes: float = Field(description="one prompt's KV cache: prompt tokens x KV bytes per token")
    kv_transfer_s: float = Field(description="its time over the link: bytes / the link's bytes per second")
    link: str = Field(description="what the KV moves over, in words")
    link_bytes_per_s: float
    shared_machines: bool = Field(description="both pools on the same machines (else each pool's own)")
    prefill_ttft_p95_s: float = Field(description="a prefill worker's p95 first token at its share of the peak")
    decode_batch: int = Field(description="sequences a decode worker runs at the TPOT target (its capacity's)")
    aggregated_monthly_usd: float | None = Field(
        None, description="the cheapest aggregated pick meeting the same targets (None: none meets them)"
    )
    aggregated_offer_id: str | None = None
    aggregated_layout: str | None = None


class Speculation(BaseModel):
    """Speculative decoding weighed at a pick's layout and offer (plan/speculation.py): whether the pick runs it, the
    draft in words, and what the offer costs a month with it and decoding plainly, with the targets each misses."""

    runs: bool = Field(description="the pick speculates (it is cheaper at the targets); False: plain decoding")
    draft: str = Field(description="the draft, its tokens a step and acceptance, and the tokens a step writes")
    monthly_usd_with: float | None
    monthly_usd_without: float | None
    misses_with: list[str] = Field(default_factory=list)
    misses_without: list[str] = Field(default_factory=list)
    other_best: str = Field(
        "",
        description="the cheapest pick of the other kind (plain decoding if this one speculates) that meets the "
        "targets on any offer and layout, in words; empty where none does",
    )


class Pick(BaseModel):
    """One priced configuration. ``monthly_usd`` = GPUs paid for x price per GPU-hour x hours per month."""

    gpu: str
    weights_format: str
    offer_id: str
    provider: str
    product: str
    billing_model: str
    gpus: int = Field(description="GPUs paid for (whole nodes where the offer rents whole nodes)")
    nodes: int = Field(description="machines (or serverless workers at peak)")
    tp: int
    pp: int
    layout: str = Field(description="e.g. '2 x H100-SXM, TP 2': one replica")
    replicas: int = Field(description="copies of the layout: serving replicas, or a training job's data-parallel ranks")
    zero_stage: int | None = None
    micro_batch: int | None = Field(None, description="training: sequences per GPU per micro-batch, as chosen")
    recompute: str | None = Field(None, description="training: activation checkpointing (none, selective, full)")
    virtual_stages: int | None = Field(
        None, description="training: model chunks per pipeline stage (1: 1F1B; 2 or more: interleaved 1F1B)"
    )
    pipeline_schedule: str | None = Field(
        None,
        description="training with a pipeline: 1f1b (interleaved where virtual_stages > 1) or zb-h1 (zero bubble: "
        "the weight-gradient halves of the backward fill the bubble); null without a pipeline",
    )
    ep: int | None = Field(
        None,
        description="expert parallel: the routed experts over this many GPUs (training: within the data-parallel "
        "ranks; serving: one replica of ep GPUs at tp = pp = 1, attention data-parallel); null for serving without",
    )
    cp: int | None = Field(None, description="training: context parallel (each sequence over this many GPUs)")
    shard_gpus: int | None = Field(
        None, description="training at ZeRO-3: data-parallel ranks per HSDP shard group (0: sharded over all of them)"
    )
    monthly_usd: float | None
    run_cost_usd: float | None
    price_per_gpu_hour_usd: float
    ttft_s: float | None = Field(None, description="p95 under the traffic, else the static batch's")
    tpot_s: float | None = None
    error_band: str | None = Field(
        None, description="how far to trust ttft_s and tpot_s: the calibration band of their regime"
    )
    wall_hours: float | None = None
    mfu: float | None = Field(None, description="training: the MFU the GPU-hours use (predicted, or the user's)")
    mfu_predicted: bool | None = Field(None, description="training: True when the MFU is the step model's prediction")
    mfu_low: float | None = Field(None, description="training: the prediction's band (held-out error), low end")
    mfu_high: float | None = Field(None, description="training: the prediction's band, high end")
    tokens_per_s_per_gpu: float | None = Field(None, description="training: tokens per second per GPU at that MFU")
    requests_per_s_per_replica: float | None = None
    output_cost_per_million_usd: float | None = None
    input_cost_per_million_usd: float | None = None
    fits: bool = True
    misses: list[str]
    why: list[str]
    source: str
    price_as_of: str | None
    user_price: bool = Field(False, description="priced at the user's own rate (Your prices), not the catalog's")
    disaggregated: Disaggregated | None = Field(
        None,
        exclude_if=lambda v: v is None,
        description="serving as separate prefill and decode pools (then tp, layout, replicas and "
        "requests_per_s_per_replica are the decode pool's, gpus both pools'); absent for aggregated serving",
    )
    speculation: Speculation | None = Field(
        None,
        exclude_if=lambda v: v is None,
        description="speculative decoding weighed against plain decoding at this layout and offer (where the "
        "scenario names a draft model, or its model ships an MTP module and spec_mtp is 'weigh'); absent otherwise",
    )

    @classmethod
    def renting(cls, o: Offer, **fields: Any) -> Pick:
        """A pick on offer ``o``: the offer's own fields, its layout's label, and whether it misses a target."""
        fields.setdefault("layout", layout_label(fields["gpu"], fields["tp"], fields["pp"]))
        fields.setdefault("run_cost_usd", None)
        offer = dict(
            offer_id=o.offer_id,
            provider=o.provider,
            product=o.product,
            billing_model=o.billing_model,
            price_per_gpu_hour_usd=o.price_per_gpu_hour_usd,
            source=o.source,
            price_as_of=o.price_as_of,
            user_price=o.user_price,
        )
        return cls(**offer, **fields)

    @computed_field(description="no target missed: always in step with ``misses``, which the search may extend")
    @property
    def meets_target(self) -> bool:
        return not self.misses

    @property
    def replica_gpus(self) -> int:
        """GPUs of one serving replica: tp x pp, or ep for an expert-parallel one (a serving pick has no
        micro-batch; a training pick's EP lies within its data-parallel ranks)."""
        return self.tp * self.pp * ((self.ep or 1) if self.micro_batch is None else 1)

    @property
    def running_gpus(self) -> int:
        """GPUs at work serving (a whole node rented for fewer idles the rest): both pools' of a disaggregated pick,
        else replicas x GPUs per replica."""
        d = self.disaggregated
        return d.prefill.gpus + d.decode.gpus if d is not None else self.replica_gpus * self.replicas

    @property
    def rank_cost(self) -> float:
        """What the search ranks by: the monthly cost (serving), else the run's; none: infinite."""
        v = self.run_cost_usd if self.monthly_usd is None else self.monthly_usd
        return math.inf if v is None else v


class ParetoPoint(BaseModel):
    """A configuration no other beats on both cost and p95 TTFT."""

    offer_id: str
    gpu: str
    layout: str
    weights_format: str
    monthly_usd: float
    ttft_s: float
    tpot_s: float | None
    meets_target: bool


class Plan(BaseModel):
    model: str
    mode: str
    unit: str
    picks: list[Pick] = Field(default_factory=list)
    near_misses: list[Pick] = Field(default_factory=list)
    rejected: list[dict] = Field(default_factory=list)
    candidates: int = 0
    why: list[WhyStep] = Field(default_factory=list, description="the top pick's why-chain")
    pareto: list[ParetoPoint] = Field(default_factory=list)
    message: str | None = Field(None, description="why nothing qualifies, when nothing does")
    training_flops: float | None = None
    training_tokens: float | None = None
    mfu: float | None = None
    tokens_note: str | None = None


# ---- the cost table's rows (the Cost page) ------------------------------------------------------


class InferenceCostRow(Pick):
    """One offer's best serving configuration on the Cost page: its Pick (monthly always-on, latency, layout) and
    a run: a day's requests as one batch job on the replicas, or an hour without a traffic estimate."""

    run_cost_usd: float = Field(description="the run on whole nodes: billing increments, minimums, spot restarts")
    run_hours: float = Field(description="the run's length: a day's requests / (capacity x replicas), else 1 hour")
    run_description: str = Field(description="what the run is, in words")
    monthly_always_on_usd: float = Field(description="GPUs paid for x price per GPU-hour x hours per month")
    notes: list[str] = Field(description="the run's billing notes")


class TrainingCostRow(Pick):
    """One offer's training run on the Cost page: its Pick (run cost with failed runs and sweeps, wall hours) and
    what the same GPUs cost kept a month."""

    monthly_always_on_usd: float = Field(description="the run's GPUs x price per GPU-hour x hours per month")
    gpu_hours: float = Field(description="training FLOPs / (dense BF16 peak x MFU), in GPU-hours")
    notes: list[str] = Field(description="how the run is laid out and billed (the pick's why)")


class Rejected(BaseModel):
    """A GPU type, offer or layout that cannot run the scenario, and why (the JSON leaves out the keys it has none
    for: no offer means no offer of the GPU type can run it, no layout any layout)."""

    model_config = ConfigDict(frozen=True)

    gpu: str
    reason: str
    weights_format: str | None = None
    offer_id: str | None = None
    layout: str | None = Field(None, description="one replica, e.g. '2 x H100-SXM, TP 2'")

    def __init__(self, *args: str | None, **fields: Any):
        """Also positionally, in the fields' order: Rejected(gpu, reason, weights_format, offer_id, layout)."""
        super().__init__(
            **dict(zip(("gpu", "reason", "weights_format", "offer_id", "layout"), args, strict=False)), **fields
        )

    @model_serializer(mode="wrap")
    def _given(self, handler):
        return {k: v for k, v in handler(self).items() if v is not None}
