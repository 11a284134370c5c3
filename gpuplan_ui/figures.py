"""Pure plotly graph_objects figure builders (no streamlit; testable without a server).

Every figure takes a report dict from gpuplan_core.api and only lays it out. Layouts use the empty
plotly template ("none"): the app's Streamlit theme styles the charts in the browser anyway, and the default
template added 6.5 kB to every figure and halved Plotly's first-draw speed. Each figure is built in
one go.Figure(data, layout) call with plain dicts (no update_layout / add_vline round trips: those cost
tens of milliseconds per rerun), and lines carry only the points they need.
"""

from __future__ import annotations

import math

import plotly.graph_objects as go

from gpuplan_core.reports import GpuPerf, MemoryReport
from gpuplan_core.units import GB

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
}
COMPONENT_COLORS = [
    "#1d4ed8",
    "#f97316",
    "#10b981",
    "#a855f7",
    "#64748b",
    "#94a3b8",
    "#e11d48",
    "#0ea5e9",
    "#84cc16",
    "#facc15",
    "#14b8a6",
]
NEUTRAL = "#6b7280"


def _layout(title: str, height: int = 420, **extra) -> dict:
    return {
        "title": {"text": title, "x": 0, "font": {"size": 16}},
        "height": height,
        "margin": {"l": 10, "r": 10, "t": 50, "b": 10},
        "legend": {"orientation": "h", "y": -0.18},
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
    """Stacked per-GPU budget (decimal GB) against each GPU's nominal and usable VRAM."""
    gpus = report.gpus
    names = [g.gpu for g in gpus]
    data = [
        {
            "type": "bar",
            "name": comp,
            "x": names,
            "y": [val / GB] * len(names),
            "marker": {"color": COMPONENT_COLORS[i % len(COMPONENT_COLORS)]},
            "hovertemplate": f"{comp}: %{{y:,.2f}} GB<extra></extra>",
        }
        for i, (comp, val) in enumerate(report.components.items())
    ]
    for name, key, color in (
        ("VRAM (nominal)", "vram_nominal_bytes", NEUTRAL),
        ("usable x utilization (what a job may fill)", "budget_bytes", "#dc2626"),
    ):
        data.append(
            {
                "type": "scatter",
                "name": name,
                "x": names,
                "y": [getattr(g, key) / GB for g in gpus],
                "mode": "markers",
                "marker": {"symbol": "line-ew-open", "size": 34, "color": color, "line": {"width": 3, "color": color}},
                "hovertemplate": f"%{{x}} {name}: %{{y:,.1f}} GB<extra></extra>",
            }
        )
    lay = report.layout
    title = f"Memory per GPU at {lay.gpus} GPU(s) (tp {lay.tp}, pp {lay.pp}) vs each GPU's VRAM; scope: {report.scope}"
    return go.Figure(
        data=data, layout=_layout(title, barmode="stack", yaxis={"title": {"text": "GB (10^9 bytes) per GPU"}})
    )


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
    for ph, color, sym in (("prefill", "#1d4ed8", "circle"), ("decode", "#dc2626", "square")):
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
        f"Roofline: {p.gpu} x{p.gpu_count}",
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
    """Decode tokens/s against batch, with the compute-bound batch and the largest batch that fits."""
    sweep = p.sweep
    data = [
        {
            "type": "scatter",
            "x": [s.batch for s in sweep],
            "y": [s.tokens_per_s for s in sweep],
            "mode": "lines+markers",
            "name": "decode tokens/s (all sequences)",
            "line": {"color": GPU_COLORS.get(p.gpu, "#334155")},
        }
    ]
    ymax = max([s.tokens_per_s for s in sweep] or [1])
    xmax = max([s.batch for s in sweep] + [p.compute_bound_batch or 1, p.max_batch or 1])
    shapes, notes = [], []
    if p.compute_bound_batch:
        s, n = _vline(p.compute_bound_batch, f"matmuls compute-bound at {p.compute_bound_batch:,}", "#1d4ed8", "dot")
        shapes.append(s)
        notes.append(n)
    if p.max_batch:
        s, n = _vline(p.max_batch, f"largest batch that fits: {p.max_batch:,}", "#dc2626", "dash", "bottom")
        shapes.append(s)
        notes.append(n)
    layout = _layout(
        f"Decode throughput vs batch on {p.gpu}",
        380,
        shapes=shapes,
        annotations=notes,
        xaxis={
            "type": "log",
            "title": {"text": "batch (concurrent sequences)"},
            "range": [-0.1, math.log10(xmax * 1.6)],
        },
        yaxis={"title": {"text": "tokens/s"}, "range": [0, ymax * 1.15]},
    )
    return go.Figure(data=data, layout=layout)


def latency_figure(rows: list[GpuPerf]) -> go.Figure:
    ok = [r for r in rows if r.fits]
    names = [f"{r.gpu} x{r.gpu_count}" for r in ok]
    colors = [GPU_COLORS.get(r.gpu, "#334155") for r in ok]
    data = [
        {
            "type": "bar",
            "name": "TTFT (ms)",
            "x": names,
            "y": [r.ttft_s * 1e3 for r in ok],
            "marker": {"color": colors},
            "hovertemplate": "%{x}: TTFT %{y:,.1f} ms<extra></extra>",
        },
        {
            "type": "bar",
            "name": "TPOT (ms)",
            "x": names,
            "y": [r.tpot_s * 1e3 for r in ok],
            "marker": {"color": colors, "pattern": {"shape": "/"}},
            "hovertemplate": "%{x}: TPOT %{y:,.2f} ms<extra></extra>",
        },
    ]
    return go.Figure(
        data=data,
        layout=_layout(
            "Time to first token and time per output token, per GPU",
            380,
            barmode="group",
            yaxis={"title": {"text": "milliseconds (log)"}, "type": "log"},
        ),
    )


def lifetime_figure(life: dict, title: str) -> go.Figure:
    months = [m["month"] for m in life["months"]]
    data = [
        {
            "type": "scatter",
            "x": months,
            "y": [m["training_usd"] for m in life["months"]],
            "name": "training (once)",
            "line": {"color": "#7c3aed", "dash": "dash"},
        },
        {
            "type": "scatter",
            "x": months,
            "y": [m["inference_cumulative_usd"] for m in life["months"]],
            "name": "inference, cumulative",
            "line": {"color": "#0891b2"},
        },
    ]
    shapes, notes = [], []
    be = life.get("inference_passes_training_month")
    if be is not None:
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
            yaxis={"title": {"text": "USD"}},
        ),
    )


def projection_figure(rows: list[dict], label: str) -> go.Figure:
    data = [
        {
            "type": "scatter",
            "x": [r["month"] for r in rows],
            "y": [r["monthly_usd"] for r in rows],
            "mode": "lines",
            "name": label,
            "line": {"color": NEUTRAL},
        }
    ]
    return go.Figure(
        data=data,
        layout=_layout(label, 320, xaxis={"title": {"text": "month"}}, yaxis={"title": {"text": "USD per month"}}),
    )


def fmt_bytes(n: float | None) -> str:
    if n is None or (isinstance(n, float) and math.isnan(n)):
        return "-"
    return f"{n / GB:,.2f} GB ({n / 2**30:,.2f} GiB)"


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


def load_figure(curve: dict, which: str) -> go.Figure:
    """TTFT (``which="ttft"``: p50 and p95) or TPOT (``"tpot"``) of one replica against the request rate, with
    the target, the capacity within the targets and the traffic's peak per replica marked."""
    pts = [p for p in curve["points"] if not p["saturated"]]
    x = [p["requests_per_s"] for p in pts]
    color = GPU_COLORS.get(curve["gpu"], "#334155")
    if which == "ttft":
        data = [
            {"type": "scatter", "x": x, "y": [p["ttft_p95_s"] * 1e3 for p in pts], "mode": "lines",
             "name": "p95 TTFT", "line": {"color": color, "width": 3}},
            {"type": "scatter", "x": x, "y": [p["ttft_p50_s"] * 1e3 for p in pts], "mode": "lines",
             "name": "median TTFT", "line": {"color": color, "dash": "dot"}},
        ]  # fmt: skip
        target, title, ytitle = curve["ttft_target_s"], "Time to first token vs load", "TTFT (ms)"
    else:
        data = [
            {"type": "scatter", "x": x, "y": [p["tpot_mean_s"] * 1e3 for p in pts], "mode": "lines",
             "name": "mean TPOT", "line": {"color": color, "width": 3}},
            {"type": "scatter", "x": x, "y": [p["tpot_p50_s"] * 1e3 for p in pts], "mode": "lines",
             "name": "median gap between tokens", "line": {"color": color, "dash": "dot"}},
        ]  # fmt: skip
        target, title, ytitle = curve["tpot_target_s"], "Time per output token vs load", "TPOT (ms)"
    ys = [v for t in data for v in t["y"]] + ([target * 1e3] if target else [])
    shapes, notes = [], []
    if target:
        s, n = _hline(target * 1e3, f"target {target * 1e3:,.0f} ms", "#dc2626")
        shapes.append(s)
        notes.append(n)
    cap = curve["capacity_requests_per_s"]
    if cap:
        s, n = _vline(cap, f"capacity {cap:,.2f} req/s", "#16a34a", "dash")
        shapes.append(s)
        notes.append(n)
    layout = _layout(
        f"{title} (one replica, {curve['gpu']} x{curve['tp'] * curve['pp']})",
        360,
        shapes=shapes,
        annotations=notes,
        xaxis={"type": "log", "title": {"text": "requests per second (Poisson arrivals)"}},
        yaxis={"title": {"text": ytitle}, "range": [0, max(ys) * 1.15]},
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
    layout = _layout(
        "Cost against first-token latency: the cheapest configuration at each latency",
        360,
        xaxis={"type": "log", "title": {"text": "p95 time to first token (ms)"}},
        yaxis={"title": {"text": "USD per month"}, "rangemode": "tozero"},
        showlegend=False,
    )
    return go.Figure(data=data, layout=layout)
