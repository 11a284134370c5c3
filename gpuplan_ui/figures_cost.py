"""The money charts: the Cost page's cheapest offers, lifetime (flat, or with growing traffic) and market
projection, the Overview's cost-latency Pareto front, and Compare's A-and-B panels (pure plotly, styled as
figures.py says)."""

from __future__ import annotations

import math
from datetime import date

import plotly.graph_objects as go

from gpuplan_core import (
    GB,
    Growth,
    InferenceCostRow,
    Lifetime,
    MarketProjection,
    TrainingCostRow,
    counted,
    replica_split,
)

from . import chart_fit
from .figures import BLUE, GPU_COLORS, NEUTRAL, chart_layout, log_ticks, x_marker


def offer_label(r: InferenceCostRow | TrainingCostRow) -> str:
    """An offer as a bar's label: provider, the GPUs paid for and how the model is split, the billing when it is
    not on-demand ("vast · 2 x RTX-3090 (TP 1)", "aws · 64 x H100-SXM (TP 2, PP 2) · spot", "vast · 24 x H200 (EP 8,
    attention DP)": the core's ``replica_split``); the answer counts the same GPUs."""
    split = replica_split(r)
    billing = "" if r.billing_model == "on_demand" else " · " + r.billing_model.replace("_", " ")
    return f"{r.provider} · {r.gpus:,} x {r.gpu} ({split}){billing}" + (" · your price" if r.user_price else "")


def cheapest_figure(rows: list[InferenceCostRow] | list[TrainingCostRow], inference: bool) -> go.Figure:
    """The ten cheapest offers (monthly always-on for serving, the run for training), cheapest on top, one bar per
    offer (a label shared by two offers names each offer); an offer that misses a target is grey and says so, and the
    title names the cheapest that meets every target, never one that misses: its bar is outlined and its label and
    value bold. Your own prices are marked."""

    def usd(r) -> float:
        return r.monthly_always_on_usd if inference else r.run_cost_usd

    def usd_text(x: float) -> str:  # cents below $100: two runs of $3.26 and $3.40 read apart (common.text.usd's
        # rule, kept here: the chart's text is the route's last file, tests/ui/test_cost_path.py counts each file)
        return f"${x:,.0f}" if x >= 100 else f"${x:,.2f}"

    ranked = sorted(rows, key=lambda r: (usd(r), r.offer_id))
    top = ranked[:10][::-1]
    names = [offer_label(r) for r in top]
    names = [f"{n} ({r.offer_id})" if names.count(n) > 1 else n for n, r in zip(names, top, strict=True)]
    names = [n if r.meets_target else f"{n} · misses target" for n, r in zip(names, top, strict=True)]
    best = next((r for r in ranked if r.meets_target), None)
    bold = [r is best for r in top]
    data = [
        {
            "type": "bar",
            "orientation": "h",
            "y": names,
            "x": [usd(r) for r in top],
            "marker": {
                "color": [GPU_COLORS.get(r.gpu, "#334155") if r.meets_target else "#9ca3af" for r in top],
                "line": {"color": [BLUE if b else NEUTRAL for b in bold], "width": [3 if b else 0 for b in bold]},
            },
            "text": [
                f"  <b>{usd_text(usd(r))}</b>" if b else f"  {usd_text(usd(r))}" for r, b in zip(top, bold, strict=True)
            ],
            "textposition": "outside",
            "cliponaxis": False,
            "customdata": [r.offer_id for r in top],
            "hovertemplate": "%{customdata}: $%{x:,.2f}<extra></extra>",
            "showlegend": False,
        }
    ]
    what = "a month, always on" if inference else "for the run"
    targets = inference or any(not r.meets_target for r in ranked)  # training's only target: a deadline, if set
    if best is not None:
        lead = "Cheapest that meets your targets" if targets else "Cheapest"
        title = f"{lead}: {offer_label(best)} at {usd_text(usd(best))} {what}"
        if any(not r.meets_target for r in top):
            title += "; grey bars miss a target"
    else:
        title = f"None of these meets your targets; the cheapest is {usd_text(usd(top[-1]))} {what}"
    ticks = [f"<b>{n}</b>" if b else n for n, b in zip(names, bold, strict=True)]
    layout = chart_layout(
        title,
        max(300, 30 * len(top) + 110),
        xaxis={
            "title": {"text": "USD " + ("per month" if inference else "per run")},
            "range": [0, usd(top[0]) * 1.25],
            "tickformat": "$,.0f",
        },
        # the category labels as given (the highlighted one bold), in the bars' order
        yaxis={"automargin": True, "tickvals": names, "ticktext": ticks},
    )
    end = chart_fit.number_text(usd(top[0]) * 1.25, "$,.0f")  # the widest x tick, at most the range's end
    layout["margin"] |= chart_fit.margins(ticks, y_title=False, x_end_label=end)  # drawn once (chart_fit)
    return go.Figure(data=data, layout=layout)


def lifetime_figure(life: Lifetime, title: str) -> go.Figure:
    months = [m.month for m in life.months]
    trained = any(m.training_usd for m in life.months)
    data = [
        {
            "type": "scatter",
            "x": months,
            "y": [m.training_usd for m in life.months],
            "name": "training (once)",
            "line": {"color": "#7c3aed", "dash": "dash"},
            "visible": trained,
        },
        {
            "type": "scatter",
            "x": months,
            "y": [m.inference_cumulative_usd for m in life.months],
            "name": "inference, cumulative",
            "line": {"color": "#0891b2"},
        },
    ]
    shapes, notes = [], []
    be = life.inference_passes_training_month
    if be is not None and trained:
        line, note = x_marker(be, f"inference passes training in month {be}")
        shapes.append(line)
        notes.append(note)
    return go.Figure(
        data=data,
        layout=chart_layout(
            title,
            360,
            shapes=shapes,
            annotations=notes,
            xaxis={"title": {"text": "month"}},
            yaxis={"title": {"text": "USD"}, "tickformat": "$,.0f"},
        ),
    )


def short_usd(v: float) -> str:
    """$6M, $1.5M, $400k, $950: a round tick's label."""
    for div, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= div:
            return f"${v / div:,.4g}{suffix}"
    return f"${v:,.0f}"


def money_ticks(top: float, count: int = 4) -> dict:
    """Round ticks from 0 to at least ``top`` (steps of 1, 2, 2.5 or 5 x 10^k, about ``count`` of them), labelled
    "$6M" style: an axis that reads $397,206 / $794,411 is read as noise."""
    if top <= 0:
        return {"tickformat": "$,.0f"}
    raw = top / count
    k = 10 ** math.floor(math.log10(raw))
    step = next(m * k for m in (1, 2, 2.5, 5, 10) if m * k >= raw)
    vals = [i * step for i in range(math.ceil(top / step) + 1)]
    return {"tickmode": "array", "tickvals": vals, "ticktext": [short_usd(v) for v in vals], "range": [0, vals[-1]]}


def month_date(start: date, months: int) -> str:
    """The calendar month ``months`` after ``start``: 'Mar 2027'."""
    y, m = divmod(start.month - 1 + months, 12)
    return date(start.year + y, m + 1, 1).strftime("%b %Y")


def growth_figure(g: Growth, title: str, start: date | None = None) -> go.Figure:
    """The lifetime with growing traffic: training once, serving's cumulative spend, and each month's bill as steps
    (right axis, its replicas in the hover); marked: the month inference passes training (with its calendar month
    from ``start``) and the first month the pick needs more replicas, with what that month costs."""
    rows = g.months
    months = [m.month for m in rows]
    trained = any(m.training_usd for m in rows)
    data = [
        go.Scatter(
            x=months,
            y=[m.training_usd for m in rows],
            name="training (once)",
            visible=trained,
            line={"color": "#7c3aed", "dash": "dash"},
        ),
        go.Scatter(
            x=months,
            y=[m.inference_cumulative_usd for m in rows],
            name="inference, cumulative",
            line={"color": "#0891b2"},
        ),
        go.Scatter(
            x=months,
            y=[m.monthly_usd for m in rows],
            name="monthly bill (right axis)",
            yaxis="y2",
            line={"color": "#f97316", "shape": "hv"},
            customdata=[counted(m.replicas, "replica") for m in rows],
            hovertemplate="month %{x}: %{y:$,.0f} for %{customdata}<extra></extra>",
        ),
    ]
    shapes, notes = [], []

    def mark(x: int, text: str, color: str, y: float) -> None:
        line, note = x_marker(x, text, color, y, font={"color": color})
        shapes.append(line)
        notes.append(note)

    be = g.inference_passes_training_month
    if be is not None and trained:
        when = f" (about {month_date(start, be)})" if start else ""
        mark(be, f"inference passes training in month {be}{when}", NEUTRAL, 1)
    spike = next((m for m in rows if m.month == g.spike_month), None)
    spike_text = (
        f"the {g.spike_factor:g}x spike takes {counted(spike.replicas, 'replica')} "
        f"({spike.monthly_usd:,.0f} USD that month)"
        if spike is not None
        else ""
    )
    if (more := g.more_replicas_month) is not None:
        extra = (g.next_step_monthly_usd or 0.0) - (g.pick_monthly_usd or 0.0)
        text = f"month {more}: {g.next_step_replicas} replicas needed ({extra:+,.0f} USD a month on today)"
        if spike is not None and spike.month == more:  # one marker for both: the spike's own count with it
            text += f"; {spike_text}"
        mark(more, text, "#f97316", 0.9)
    if spike is not None and spike.month != more:
        mark(spike.month, f"month {spike.month}: {spike_text}", "#f97316", 0.75)
    return go.Figure(
        data=data,
        layout=chart_layout(
            title,
            380,
            shapes=shapes,
            annotations=notes,
            xaxis={"title": {"text": "month"}},
            yaxis={
                "title": {"text": "USD, cumulative"},
                **money_ticks(max(max(m.inference_cumulative_usd, m.training_usd) for m in rows)),
            },
            yaxis2={
                "title": {"text": "USD per month"},
                **money_ticks(max(m.monthly_usd for m in rows)),
                "overlaying": "y",
                "side": "right",
                "rangemode": "tozero",
                "showgrid": False,
            },
        ),
    )


def projection_figure(proj: MarketProjection) -> go.Figure:
    label = proj.estimate.label
    data = [
        {
            "type": "scatter",
            "x": [r.month for r in proj.months],
            "y": [r.monthly_usd for r in proj.months],
            "mode": "lines",
            "name": label,
            "line": {"color": NEUTRAL},
        }
    ]
    return go.Figure(
        data=data,
        layout=chart_layout(label, 320, xaxis={"title": {"text": "month"}}, yaxis={"title": {"text": "USD per month"}}),
    )


def pareto_figure(plan) -> go.Figure:
    """Monthly cost against p95 TTFT for the configurations no other beats on both, the pick highlighted."""
    pts = plan.pareto
    top = (plan.picks[0].offer_id, plan.picks[0].layout, plan.picks[0].weights_format) if plan.picks else None
    data = [
        {
            "type": "scatter",
            "x": [p.ttft_s * 1e3 for p in pts],
            "y": [p.monthly_usd for p in pts],
            "mode": "lines+markers",
            "line": {"shape": "hv", "color": NEUTRAL},
            "marker": {
                "size": [16 if (p.offer_id, p.layout, p.weights_format) == top else 9 for p in pts],
                "color": [GPU_COLORS.get(p.gpu, "#334155") for p in pts],
                "symbol": ["circle" if p.meets_target else "x" for p in pts],
            },
            "text": [f"{p.offer_id}<br>{p.layout}, {p.weights_format}" for p in pts],
            "hovertemplate": "%{text}<br>p95 TTFT %{x:,.0f} ms<br>%{y:$,.0f}/month<extra></extra>",
            "name": "cheapest for its latency",
        }
    ]
    fast, cheap = min(pts, key=lambda p: p.ttft_s), min(pts, key=lambda p: p.monthly_usd)
    title = (
        f"A faster first token costs more: ${cheap.monthly_usd:,.0f} a month at {cheap.ttft_s * 1e3:,.0f} ms, "
        f"${fast.monthly_usd:,.0f} at {fast.ttft_s * 1e3:,.0f} ms"
    )
    ttfts = [p.ttft_s * 1e3 for p in pts]
    layout = chart_layout(
        title,
        360,
        xaxis={**log_ticks(min(ttfts) * 0.8, max(ttfts) * 1.25), "title": {"text": "p95 time to first token (ms)"}},
        yaxis={"title": {"text": "USD per month"}, "rangemode": "tozero", "tickformat": "$,.0f"},
        showlegend=False,
    )
    widest = chart_fit.number_text(max(p.monthly_usd for p in pts) * 1.1, "$,.0f")  # above the top tick
    layout["margin"] |= chart_fit.margins([widest], y_title=True)  # drawn once (chart_fit)
    return go.Figure(data=data, layout=layout)


def compare_figure(a, b) -> go.Figure:
    """A and B side by side, one small panel per measure (memory per GPU, first token, time per token, cost);
    a side that does not fit has no speed or price bar."""
    from plotly.subplots import make_subplots

    panels = [
        ("Memory per GPU (GB)", a.per_gpu_bytes / GB, b.per_gpu_bytes / GB, ",.1f"),
        ("First token (ms)", _ms(a.ttft_s), _ms(b.ttft_s), ",.0f"),
        ("Per token (ms)", _ms(a.tpot_s), _ms(b.tpot_s), ",.1f"),
        ("Cost per month ($)", a.monthly_usd, b.monthly_usd, "$,.0f"),
        ("Cost of the run ($)", a.run_usd, b.run_usd, "$,.0f"),
    ]
    panels = [p for p in panels if p[1] is not None or p[2] is not None]
    fig = make_subplots(rows=1, cols=len(panels), subplot_titles=[p[0] for p in panels], horizontal_spacing=0.08)
    for i, (name, x, y, f) in enumerate(panels, start=1):
        vals = [x, y]
        fig.add_trace(
            go.Bar(
                x=["A", "B"],
                y=[v if v is not None else 0 for v in vals],
                marker={"color": [BLUE, "#f97316"]},
                text=[("n/a" if v is None else format(v, f.replace("$", ""))) for v in vals],
                textposition="outside",
                cliponaxis=False,
                showlegend=False,
                hovertemplate=f"%{{x}}: %{{y:{f.replace('$', '')}}}<extra>{name}</extra>",
            ),
            row=1,
            col=i,
        )
        fig.update_yaxes(showticklabels=False, rangemode="tozero", row=1, col=i)
    fig.update_layout(chart_layout("A and B side by side", 320, margin={"l": 10, "r": 10, "t": 70, "b": 10}))
    return fig


def _ms(s: float | None) -> float | None:
    return None if s is None else s * 1e3
