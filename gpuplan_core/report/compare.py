"""Compare A vs B: the typed difference of two sides (what each runs on, needs, does and costs) and a verdict.

A difference in what a side runs on (GPU, count, formats, batch) is always a difference, said first; a side that does
not fit shows what it needs, never a price.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from ..common.text import gb, ms, usd


class Side(BaseModel):
    """One scenario of a comparison, as its answer states it: what the pick runs on, memory per GPU at its layout
    and, where there is a pick, its latency and cost (``fits``: there is one)."""

    label: str
    settings: dict[str, str] = Field(
        default_factory=dict,
        description="what the side runs on, each in words that read alone: {'GPUs': '2 x H100 SXM', 'Weights': "
        "'FP8 weights', 'KV cache': 'BF16 KV cache', 'Batch': 'batch 8'}",
    )
    fits: bool
    per_gpu_bytes: float
    ttft_s: float | None = None
    tpot_s: float | None = None
    monthly_usd: float | None = None
    per_million_usd: float | None = None
    run_usd: float | None = None
    energy_kwh: float | None = Field(None, description="the run's kWh (training) or a month's (serving)")
    co2_kg: float | None = Field(None, description="the same period's CO2 at the site's grid")
    kwh_per_million: float | None = Field(None, description="serving: kWh per 1M output tokens")
    needs: str | None = Field(None, description="without a pick: why nothing fits and meets the targets")
    how: str = Field("", description="how the side was found: the answer, or the search pinned to a GPU (count)")
    pinned: bool = Field(False, description="the user pinned the side to a GPU type (and count)")
    gpu: str | None = Field(None, description="the pick's GPU type")
    gpus: int | None = Field(None, description="GPUs the pick rents (the Overview's count)")


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
        _diff("Energy (run, or a month serving)", a.energy_kwh, b.energy_kwh, lambda x: f"{x:,.0f} kWh"),
        _diff("CO2 (run, or a month serving)", a.co2_kg, b.co2_kg, lambda x: f"{x / 1000:,.2f} t"),
        _diff("Energy per 1M output tokens", a.kwh_per_million, b.kwh_per_million, lambda x: f"{x:,.2f} kWh"),
    ]
    rows = [r for r in rows if not (r.a == "n/a" and r.b == "n/a")]
    settings = [
        Difference(metric=k, a=a.settings.get(k, "n/a"), b=b.settings.get(k, "n/a"), change="differs", change_pct="n/a")
        for k in dict.fromkeys([*a.settings, *b.settings])
        if a.settings.get(k) != b.settings.get(k)
    ]
    rows = settings + rows
    same = not settings and all(r.change in ("0", "same", "n/a") for r in rows) and a.fits == b.fits
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
        else f"only {'A' if a.fits else 'B'} fits ({'B' if a.fits else 'A'} has no configuration: "
        f"{((b if a.fits else a).needs or '').rstrip('.')})"
    )
    if parts:
        first = " and ".join(parts)
        first = first if first.startswith("B") else "B is " + first
    else:  # the numbers compared are the same, or a side has none (it does not fit)
        first = "" if settings else "A and B differ only in settings that do not change these numbers"
    one = a if a.fits and not b.fits else b if b.fits and not a.fits else None
    if one is not None and (one.monthly_usd or one.run_usd):
        price = f"{usd(one.monthly_usd)} a month" if one.monthly_usd else f"{usd(one.run_usd)} per run"
        fits += f"; {'A' if one is a else 'B'} costs {price}"
    head = "B runs " + ", ".join(f"{d.b} instead of {d.a}" for d in settings) if settings else ""
    verdict = "; ".join(x for x in (head, first, fits) if x)
    return Comparison(verdict=verdict[0].upper() + verdict[1:] + ".", rows=rows, identical=False)


class CompareReport(BaseModel):
    """Both sides as computed, their comparison, and what was adjusted on the way (B's GPU count)."""

    a: Side
    b: Side
    comparison: Comparison
    notes: list[str] = Field(default_factory=list)
