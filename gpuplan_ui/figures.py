"""Pure plotly graph_objects figure builders (no streamlit; testable without a server).

Every figure takes a typed report from gpuplan_core.api and only lays it out. Layouts use the empty
plotly template ("none"): the app's Streamlit theme styles the charts in the browser anyway, and the default
template added 6.5 kB to every figure and halved Plotly's first-draw speed. Each figure is built in
one go.Figure(data, layout) call with plain dicts (no update_layout / add_vline round trips: those cost
tens of milliseconds per rerun), and lines carry only the points they need.
"""

from __future__ import annotations

import math

import plotly.graph_objects as go

from gpuplan_core import (
    GB,
    GpuPerf,
    InferenceCostRow,
    Lifetime,
    MarketProjection,
    MemoryReport,
    ServingCurve,
    TrainingCostRow,
)

# One colour per GPU, the same on every chart.
GPU_COLORS = {
    "B200": "#7c3aed",
    "H200": "#2563eb",
    "H100-SXM": "#0891b2",
    "H100-PCIe": "#06b6d4",
    "A100-80GB-SXM": "#16a34a",
    "A100-80GB-PCIe": "#4ade80",
    "A100-40GB": "#65a30d",
    "L40S": "#d97706",
    "L4": "#f59e0b",
    "RTX-PRO-6000": "#dc2626",
    "MI300X": "#db2777",
    "RTX-4090": "#ea580c",
    "RTX-3090": "#c2410c",
    "RTX-5090": "#b91c1c",
    "RTX-A6000": "#0d9488",
    "RTX-6000-Ada": "#ca8a04",
    "A10": "#4d7c0f",
    "A10G": "#84cc16",
    "L40": "#eab308",
    "A40": "#15803d",
    "V100-32GB": "#64748b",
    "T4": "#94a3b8",
}
# One colour per memory component, the same on every page (unknown names fall back to the palette in order).
COMPONENT_COLORS = {
    "weights": "#2563eb",
    "weights kept in 16 bit (embeddings, LM head, norms)": "#60a5fa",
    "frozen base weights": "#2563eb",
    "KV cache": "#f97316",
    "activation workspace": "#10b981",
    "activations": "#10b981",
    "logits (fp32)": "#14b8a6",
    "CUDA graphs": "#a855f7",
    "CUDA context": "#64748b",
    "communication buffers": "#94a3b8",
    "gradients": "#e11d48",
    "master weights": "#0ea5e9",
    "optimizer states": "#facc15",
    "ZeRO-3 gathered parameters": "#84cc16",
    "ZeRO-3 reduce bucket": "#a3e635",
    "allocator reserve": "#cbd5e1",
}
PALETTE = ["#1d4ed8", "#f97316", "#10b981", "#a855f7", "#64748b", "#e11d48", "#0ea5e9", "#84cc16", "#facc15"]
NEUTRAL = "#6b7280"
# mid-tone colours that read on light and dark backgrounds alike (annotations and marker lines)
RED, GREEN, BLUE = "#ef4444", "#22c55e", "#3b82f6"


def component_color(name: str, i: int = 0) -> str:
    key = name.removeprefix("adapter ")
    return COMPONENT_COLORS.get(key, PALETTE[i % len(PALETTE)])


def log_ticks(lo: float, hi: float) -> dict:
    """Clean ticks for a log axis: 1, 2, 5 x 10^k within [lo, hi] (only decades when the range is wide), with
    thousands separators; no stray minor labels."""
    lo, hi = max(lo, 1e-12), max(hi, lo * 1.0001)
    steps = (1,) if math.log10(hi / lo) > 3 else (1, 2, 5)
    vals = []
    for k in range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 1):
        for m in steps:
            v = m * 10.0**k
            if lo <= v <= hi:
                vals.append(v)
    text = [f"{v:,.0f}" if v >= 1 else f"{v:g}" for v in vals]
    return {"type": "log", "tickvals": vals, "ticktext": text}


def wrap(title: str, width: int = 50) -> str:
    """A chart title broken into lines of at most ``width`` characters (plotly does not wrap): no title is cut in
    a half-width column at 1280 px."""
    lines, line = [], ""
    for word in title.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return "<br>".join([*lines, line])


def _layout(title: str, height: int = 420, **extra) -> dict:
    text = wrap(title)
    extra_lines = text.count("<br>")
    return {
        "title": {"text": text, "x": 0, "font": {"size": 15}},
        "height": height + 20 * extra_lines,
        "margin": {"l": 10, "r": 10, "t": 50 + 20 * extra_lines, "b": 10},
        "legend": {"orientation": "h", "y": -0.22},
        "hovermode": "closest",
        "template": "none",
        **extra,
    }


def _vline(x: float, text: str, color: str, dash: str, yanchor: str = "top") -> tuple[dict, dict]:
    shape = {
        "type": "line",
        "xref": "x",
        "yref": "paper",
        "x0": x,
        "x1": x,
        "y0": 0,
        "y1": 1,
        "line": {"color": color, "dash": dash, "width": 2},
    }
    note = {
        "x": math.log10(x) if x > 0 else 0,
        "xref": "x",
        "yref": "paper",
        "y": 1 if yanchor == "top" else 0,
        "text": text,
        "showarrow": False,
        "xanchor": "right",  # text to the left of its line: the line sits near the right edge
        "yanchor": yanchor,
        "font": {"color": color},
        "bgcolor": "rgba(127,127,127,0.15)",
    }
    return shape, note


def memory_figure(report: MemoryReport) -> go.Figure:
    """What one GPU must hold against what each GPU type offers: a bar per GPU type (usable VRAM x utilization,
    green where the need fits, red where not), the need as one line, nominal VRAM as a tick; each bar says the
    headroom or the shortfall and how many of that GPU the job takes."""
    need = report.per_gpu_bytes / GB
    n = report.layout.gpus
    gpus = sorted(report.gpus, key=lambda g: g.budget_bytes)
    names = [g.label for g in gpus]
    fits = [g for g in gpus if g.fits]

    def say(g) -> str:
        room = g.budget_bytes / GB - need
        digits = 1 if abs(room) < 10 else 0
        if g.fits:
            return f"  fits, {room:,.{digits}f} GB spare"
        if g.min_gpus:
            return f"  {-room:,.{digits}f} GB short: needs {g.min_gpus:,}"
        return "  does not fit any layout"

    data = [
        {
            "type": "bar",
            "orientation": "h",
            "name": "VRAM on the label",
            "y": names,
            "x": [g.vram_nominal_bytes / GB for g in gpus],
            "marker": {"color": NEUTRAL, "opacity": 0.25},
            "showlegend": False,
            "text": [say(g) for g in gpus],
            "textposition": "outside",
            "cliponaxis": False,
            "hovertemplate": "%{y}: %{x:,.0f} GB on the label<extra></extra>",
        },
        {
            "type": "bar",
            "orientation": "h",
            "name": "what a job may fill (usable VRAM x utilization)",
            "y": names,
            "x": [g.budget_bytes / GB for g in gpus],
            "marker": {"color": [GREEN if g.fits else RED for g in gpus], "opacity": 0.8},
            "showlegend": False,
            "hovertemplate": "%{y}: %{x:,.1f} GB usable x utilization<extra></extra>",
        },
    ]
    shapes = [
        {
            "type": "line",
            "xref": "x",
            "yref": "paper",
            "x0": need,
            "x1": need,
            "y0": 0,
            "y1": 1,
            "line": {"color": BLUE, "width": 3},
        }
    ]
    notes = [
        {
            "x": need,
            "xref": "x",
            "yref": "paper",
            "y": 1.0,
            "yanchor": "bottom",
            "xanchor": "left",
            "showarrow": False,
            "text": f"needs {need:,.1f} GB per GPU",
            "font": {"color": BLUE},
        }
    ]
    per = f" on each of {n} GPUs" if n > 1 else " per GPU"
    if fits:
        title = f"Needs {need:,.1f} GB{per}: {len(fits)} of {len(gpus)} GPU types hold it"
    else:
        fewest = min((g for g in gpus if g.min_gpus), key=lambda g: g.min_gpus or 0, default=None)
        more = f"; the fewest: {fewest.min_gpus:,} x {fewest.label}" if fewest else ""
        title = f"Needs {need:,.1f} GB{per}: no GPU type holds it at {n} GPU(s){more}"
    top = max([need, *(g.vram_nominal_bytes / GB for g in gpus)])
    layout = _layout(
        title,
        max(320, 26 * len(gpus) + 120),
        shapes=shapes,
        annotations=notes,
        xaxis={"title": {"text": "GB per GPU (10^9 bytes)"}, "range": [0, top * 1.45]},
        yaxis={"automargin": True},
        bargap=0.25,
        barmode="overlay",
    )
    return go.Figure(data=data, layout=layout)


def components_figure(report: MemoryReport) -> go.Figure:
    """What the per-GPU need is made of: one stacked bar, a colour per component (the same on every page)."""
    total = report.per_gpu_bytes / GB
    data = [
        {
            "type": "bar",
            "orientation": "h",
            "name": comp,
            "y": ["per GPU"],
            "x": [val / GB],
            "marker": {"color": component_color(comp, i)},
            "hovertemplate": f"{comp}: %{{x:,.2f}} GB<extra></extra>",
        }
        for i, (comp, val) in enumerate(report.components.items())
    ]
    biggest = max(report.components.items(), key=lambda kv: kv[1])
    title = f"What the {total:,.1f} GB per GPU is made of: mostly {biggest[0]} ({biggest[1] / GB:,.1f} GB)"
    layout = _layout(
        title,
        230,
        barmode="stack",
        xaxis={"title": {"text": "GB (10^9 bytes)"}},
        yaxis={"showticklabels": False},
        legend={"orientation": "h", "y": -0.6},
    )
    return go.Figure(data=data, layout=layout)


def roofline_figure(p: GpuPerf) -> go.Figure:
    """Log-log roofline of one GPU: the chosen format's roof, the others for reference, the workload."""
    bw = p.bandwidth_bytes_per_s
    data = []
    for fmt, peak in p.roofs.items():
        chosen = fmt == p.math_format
        ridge_x = peak / bw
        data.append(
            {
                "type": "scatter",
                "x": [0.1, ridge_x, 1e5],
                "y": [bw * 0.1 / 1e12, peak / 1e12, peak / 1e12],
                "mode": "lines",
                "name": f"{fmt.upper()} roof ({peak / 1e12:,.0f} TFLOP/s dense)",
                "line": {
                    "width": 3 if chosen else 1.5,
                    "dash": "solid" if chosen else "dot",
                    "color": GPU_COLORS.get(p.gpu, "#334155") if chosen else "#94a3b8",
                },
                "hoverinfo": "skip",
            }
        )
    ridge = p.ridge_flops_per_byte
    data.append(
        {
            "type": "scatter",
            "x": [ridge],
            "y": [p.peak_flops_per_s / 1e12],
            "mode": "markers+text",
            "text": [f"ridge {ridge:,.0f}"],
            "textposition": "top left",
            "name": "ridge point",
            "marker": {"size": 9, "color": NEUTRAL, "symbol": "diamond"},
        }
    )
    sweep = p.sweep
    if sweep:
        data.append(
            {
                "type": "scatter",
                "x": [s.intensity_flops_per_byte for s in sweep],
                "y": [s.achieved_flops_per_s / 1e12 for s in sweep],
                "mode": "lines+markers",
                "name": "decode, batch sweep",
                "line": {"color": "#f97316", "dash": "dash"},
                "text": [f"batch {s.batch}" for s in sweep],
                "hovertemplate": "%{text}: %{x:,.1f} FLOP/B, %{y:,.1f} TFLOP/s<extra></extra>",
            }
        )
    for ph, color, sym in (("prefill", BLUE, "circle"), ("decode", RED, "square")):
        d = getattr(p, ph)
        data.append(
            {
                "type": "scatter",
                "x": [d.intensity_flops_per_byte],
                "y": [d.achieved_flops_per_s / 1e12],
                "mode": "markers+text",
                "text": [f"{ph} ({d.bound}-bound)"],
                "textposition": "bottom left" if ph == "prefill" else "bottom right",
                "name": f"{ph} at batch {p.batch}",
                "marker": {"size": 13, "color": color, "symbol": sym},
                "hovertemplate": f"{ph}: %{{x:,.1f}} FLOP/B, %{{y:,.2f}} TFLOP/s achieved<extra></extra>",
            }
        )
    layout = _layout(
        f"On {p.gpu}, reading the prompt is {p.prefill.bound}-bound and each new token {p.decode.bound}-bound",
        460,
        xaxis={
            "type": "log",
            "title": {"text": "arithmetic intensity (FLOP per byte moved)"},
            "range": [-1, 5],
            "dtick": 1,
        },
        yaxis={"type": "log", "title": {"text": "TFLOP/s (dense peaks only)"}, "dtick": 1},
    )
    return go.Figure(data=data, layout=layout)


def sweep_figure(p: GpuPerf) -> go.Figure:
    """Decode tokens/s of all sequences together against batch, with the batch where the weight matmuls turn
    compute-bound and the largest batch that fits (decode steps only: the prompt's reading is not in it)."""
    sweep = p.sweep
    xs, ys = [s.batch for s in sweep], [s.tokens_per_s for s in sweep]
    data = [
        {
            "type": "scatter",
            "x": xs,
            "y": ys,
            "mode": "lines+markers",
            "name": "decode tokens/s, all users together",
            "line": {"color": GPU_COLORS.get(p.gpu, "#334155")},
            "hovertemplate": "batch %{x:,}: %{y:,.0f} tokens/s<extra></extra>",
        }
    ]
    xmax = max([*xs, p.compute_bound_batch or 1, p.max_batch])
    shapes, notes = [], []
    if p.compute_bound_batch and p.compute_bound_batch <= xmax:
        s, n = _vline(p.compute_bound_batch, f"compute-bound from {p.compute_bound_batch:,}", BLUE, "dot")
        shapes.append(s)
        notes.append(n)
    s, n = _vline(p.max_batch, f"largest that fits: {p.max_batch:,}", RED, "dash", "bottom")
    shapes.append(s)
    notes.append(n)
    title = f"Writing tokens: {ys[0]:,.0f} tokens/s for one user, {ys[-1]:,.0f} for {xs[-1]:,} users together"
    layout = _layout(
        title,
        380,
        shapes=shapes,
        annotations=notes,
        xaxis={**log_ticks(1, xmax * 1.5), "title": {"text": "users decoded together (batch)"}},
        yaxis={"title": {"text": "tokens/s, decode steps only"}, "range": [0, max(ys) * 1.15], "tickformat": ",.0f"},
    )
    return go.Figure(data=data, layout=layout)


def latency_figure(rows: list[GpuPerf]) -> go.Figure:
    """First-token wait and time per token on every GPU type (each at the scenario's layout or the smallest that
    fits), fastest first; names on the vertical axis so none is cut."""
    ok = sorted((r for r in rows if r.fits), key=lambda r: r.ttft_s, reverse=True)
    names = [f"{r.gpu} x{r.gpu_count}" for r in ok]
    colors = [GPU_COLORS.get(r.gpu, "#334155") for r in ok]
    data = [
        {
            "type": "bar",
            "orientation": "h",
            "name": "time to first token (ms)",
            "y": names,
            "x": [r.ttft_s * 1e3 for r in ok],
            "marker": {"color": colors},
            "hovertemplate": "%{y}: first token %{x:,.0f} ms<extra></extra>",
        },
        {
            "type": "bar",
            "orientation": "h",
            "name": "time per output token (ms)",
            "y": names,
            "x": [r.tpot_s * 1e3 for r in ok],
            "marker": {"color": colors, "pattern": {"shape": "/"}, "opacity": 0.6},
            "hovertemplate": "%{y}: %{x:,.1f} ms per token<extra></extra>",
        },
    ]
    if ok:
        best, worst = ok[-1], ok[0]
        title = (
            f"First token fastest on {best.gpu} ({best.ttft_s * 1e3:,.0f} ms), slowest on {worst.gpu} "
            f"({worst.ttft_s * 1e3:,.0f} ms)"
        )
    else:
        title = "No GPU type holds the model"
    lo = min([r.tpot_s * 1e3 for r in ok] or [1])
    hi = max([r.ttft_s * 1e3 for r in ok] or [10])
    return go.Figure(
        data=data,
        layout=_layout(
            title,
            max(360, 34 * len(ok) + 120),
            barmode="group",
            xaxis={**log_ticks(lo * 0.8, hi * 1.2), "title": {"text": "milliseconds (log scale)"}},
            yaxis={"automargin": True},
        ),
    )


def cheapest_figure(rows: list[InferenceCostRow] | list[TrainingCostRow], inference: bool) -> go.Figure:
    """The ten cheapest offers (monthly always-on for serving, the run for training), cheapest on top; your
    own prices are marked."""

    def usd(r) -> float:
        return r.monthly_always_on_usd if inference else r.run_cost_usd

    top = sorted(rows, key=usd)[:10][::-1]
    names = [f"{r.provider} · {r.layout}" + (" · your price" if r.user_price else "") for r in top]
    data = [
        {
            "type": "bar",
            "orientation": "h",
            "y": names,
            "x": [usd(r) for r in top],
            "marker": {"color": [GPU_COLORS.get(r.gpu, "#334155") for r in top]},
            "text": [f"  ${usd(r):,.0f}" for r in top],
            "textposition": "outside",
            "cliponaxis": False,
            "customdata": [r.offer_id for r in top],
            "hovertemplate": "%{customdata}: $%{x:,.2f}<extra></extra>",
            "showlegend": False,
        }
    ]
    best = top[-1]
    what = "a month, always on" if inference else "for the run"
    title = f"Cheapest: {best.provider} · {best.layout} at ${usd(best):,.0f} {what}"
    if len(top) > 1:
        title += f"; the {len(top)}th cheapest ${usd(top[0]):,.0f}"
    return go.Figure(
        data=data,
        layout=_layout(
            title,
            max(300, 30 * len(top) + 110),
            xaxis={
                "title": {"text": "USD " + ("per month" if inference else "per run")},
                "range": [0, usd(top[0]) * 1.25],
                "tickformat": "$,.0f",
            },
            yaxis={"automargin": True},
        ),
    )


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
        shapes.append(
            {
                "type": "line",
                "xref": "x",
                "yref": "paper",
                "x0": be,
                "x1": be,
                "y0": 0,
                "y1": 1,
                "line": {"color": NEUTRAL, "dash": "dot"},
            }
        )
        notes.append(
            {
                "x": be,
                "xref": "x",
                "yref": "paper",
                "y": 1,
                "showarrow": False,
                "xanchor": "left",
                "text": f"inference passes training in month {be}",
            }
        )
    return go.Figure(
        data=data,
        layout=_layout(
            title,
            360,
            shapes=shapes,
            annotations=notes,
            xaxis={"title": {"text": "month"}},
            yaxis={"title": {"text": "USD"}, "tickformat": "$,.0f"},
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
        layout=_layout(label, 320, xaxis={"title": {"text": "month"}}, yaxis={"title": {"text": "USD per month"}}),
    )


def _hline(y: float, text: str, color: str) -> tuple[dict, dict]:
    shape = {
        "type": "line",
        "xref": "paper",
        "yref": "y",
        "x0": 0,
        "x1": 1,
        "y0": y,
        "y1": y,
        "line": {"color": color, "dash": "dash", "width": 2},
    }
    note = {
        "x": 0,
        "xref": "paper",
        "y": y,
        "yref": "y",
        "text": text,
        "showarrow": False,
        "xanchor": "left",
        "yanchor": "bottom",
        "font": {"color": color},
        "bgcolor": "rgba(127,127,127,0.15)",
    }
    return shape, note


def load_figure(curve: ServingCurve, which: str) -> go.Figure:
    """TTFT (``which="ttft"``: p50 and p95) or TPOT (``"tpot"``) of one replica against the request rate, with
    the target, the capacity within the targets and the traffic's peak per replica marked."""
    pts = [p for p in curve.points if not p.saturated]
    x = [p.requests_per_s for p in pts]
    color = GPU_COLORS.get(curve.gpu, "#334155")
    if which == "ttft":
        main, median = [p.ttft_p95_s * 1e3 for p in pts], [p.ttft_p50_s * 1e3 for p in pts]
        names = ("p95 TTFT", "median TTFT")
        target, what, ytitle = curve.ttft_target_s, "p95 wait for the first token", "time to first token (ms)"
    else:
        main, median = [p.tpot_mean_s * 1e3 for p in pts], [p.tpot_p50_s * 1e3 for p in pts]
        names = ("mean TPOT", "median gap between tokens")
        target, what, ytitle = curve.tpot_target_s, "time per output token", "time per output token (ms)"
    data = [
        {"type": "scatter", "x": x, "y": main, "mode": "lines", "name": names[0], "line": {"color": color, "width": 3}},
        {"type": "scatter", "x": x, "y": median, "mode": "lines", "name": names[1],
         "line": {"color": color, "dash": "dot"}},
    ]  # fmt: skip
    ys = main + median + ([target * 1e3] if target else [])
    shapes, notes = [], []
    if target:
        s, n = _hline(target * 1e3, f"target {target * 1e3:,.0f} ms", RED)
        shapes.append(s)
        notes.append(n)
    cap = curve.capacity_requests_per_s
    if cap:
        s, n = _vline(cap, f"capacity {cap:,.2f} req/s", GREEN, "dash")
        shapes.append(s)
        notes.append(n)
    sat = curve.max_requests_per_s
    if cap:
        title = f"The {what} stays within the target up to {cap:,.2f} requests/s per replica"
    else:
        title = f"The {what} grows with load; one replica saturates at {sat:,.2f} requests/s"
    layout = _layout(
        title,
        360,
        shapes=shapes,
        annotations=notes,
        xaxis={**log_ticks(min(x or [0.01]), max(x or [1])), "title": {"text": "requests per second (one replica)"}},
        yaxis={"title": {"text": ytitle}, "range": [0, max(ys) * 1.15], "tickformat": ",.0f"},
    )
    return go.Figure(data=data, layout=layout)


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
    layout = _layout(
        title,
        360,
        xaxis={**log_ticks(min(ttfts) * 0.8, max(ttfts) * 1.25), "title": {"text": "p95 time to first token (ms)"}},
        yaxis={"title": {"text": "USD per month"}, "rangemode": "tozero", "tickformat": "$,.0f"},
        showlegend=False,
    )
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
    fig.update_layout(_layout("A and B side by side", 320, margin={"l": 10, "r": 10, "t": 70, "b": 10}))
    return fig


def _ms(s: float | None) -> float | None:
    return None if s is None else s * 1e3
