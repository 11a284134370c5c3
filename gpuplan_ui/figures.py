"""Pure plotly graph_objects figure builders (no streamlit; testable without a server).

Every figure takes a report dict from gpuplan_core.api and only lays it out.
"""

from __future__ import annotations

import math

import plotly.graph_objects as go

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


def _layout(fig: go.Figure, title: str, height: int = 420) -> go.Figure:
    fig.update_layout(
        title=dict(text=title, x=0, font=dict(size=16)),
        height=height,
        margin=dict(l=10, r=10, t=50, b=10),
        legend=dict(orientation="h", y=-0.18),
        hovermode="closest",
    )
    return fig


def memory_figure(report: dict) -> go.Figure:
    """Stacked per-GPU budget (decimal GB) against each GPU's nominal and usable VRAM."""
    gpus = report["gpus"]
    names = [g["gpu"] for g in gpus]
    fig = go.Figure()
    for i, (comp, val) in enumerate(report["components"].items()):
        fig.add_trace(
            go.Bar(
                name=comp,
                x=names,
                y=[val / GB] * len(names),
                marker_color=COMPONENT_COLORS[i % len(COMPONENT_COLORS)],
                hovertemplate=f"{comp}: %{{y:,.2f}} GB<extra></extra>",
            )
        )
    fig.add_trace(
        go.Scatter(
            name="VRAM (nominal)",
            x=names,
            y=[g["vram_nominal_bytes"] / GB for g in gpus],
            mode="markers",
            marker=dict(symbol="line-ew-open", size=34, color="#6b7280", line=dict(width=3, color="#6b7280")),
            hovertemplate="%{x} nominal: %{y:,.1f} GB<extra></extra>",
        )
    )
    fig.add_trace(
        go.Scatter(
            name="usable x utilization (what a job may fill)",
            x=names,
            y=[g["budget_bytes"] / GB for g in gpus],
            mode="markers",
            marker=dict(symbol="line-ew-open", size=34, color="#dc2626", line=dict(width=3, color="#dc2626")),
            hovertemplate="%{x} budget: %{y:,.1f} GB<extra></extra>",
        )
    )
    fig.update_layout(barmode="stack", yaxis_title="GB (10^9 bytes) per GPU")
    layout = report["layout"]
    return _layout(
        fig,
        f"Memory per GPU at {layout['gpus']} GPU(s) (tp {layout['tp']}, pp {layout['pp']}) "
        f"vs each GPU's VRAM; scope: {report['scope']}",
    )


def roofline_figure(p: dict) -> go.Figure:
    """Log-log roofline of one GPU: the chosen format's roof, the others for reference, the workload."""
    bw = p["bandwidth_bytes_per_s"]
    xs = [10 ** (k / 20) for k in range(-20, 101)]  # 0.1 .. 1e5 FLOP/byte
    fig = go.Figure()
    for fmt, peak in p["roofs"].items():
        chosen = fmt == p["math_format"]
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=[min(peak, bw * x) / 1e12 for x in xs],
                mode="lines",
                name=f"{fmt.upper()} roof ({peak / 1e12:,.0f} TFLOP/s dense)",
                line=dict(
                    width=3 if chosen else 1.5,
                    dash=None if chosen else "dot",
                    color=GPU_COLORS.get(p["gpu"], "#334155") if chosen else "#94a3b8",
                ),
                hoverinfo="skip",
            )
        )
    ridge = p["ridge_flops_per_byte"]
    fig.add_trace(
        go.Scatter(
            x=[ridge],
            y=[p["peak_flops_per_s"] / 1e12],
            mode="markers+text",
            text=[f"ridge {ridge:,.0f}"],
            textposition="top left",
            name="ridge point",
            marker=dict(size=9, color="#6b7280", symbol="diamond"),
        )
    )
    sweep = p.get("sweep") or []
    if sweep:
        fig.add_trace(
            go.Scatter(
                x=[s["intensity_flops_per_byte"] for s in sweep],
                y=[s["achieved_flops_per_s"] / 1e12 for s in sweep],
                mode="lines+markers",
                name="decode, batch sweep",
                line=dict(color="#f97316", dash="dash"),
                text=[f"batch {s['batch']}" for s in sweep],
                hovertemplate="%{text}: %{x:,.1f} FLOP/B, %{y:,.1f} TFLOP/s<extra></extra>",
            )
        )
    for ph, color, sym in (("prefill", "#1d4ed8", "circle"), ("decode", "#dc2626", "square")):
        d = p[ph]
        fig.add_trace(
            go.Scatter(
                x=[d["intensity_flops_per_byte"]],
                y=[d["achieved_flops_per_s"] / 1e12],
                mode="markers+text",
                text=[f"{ph} ({d['bound']}-bound)"],
                textposition="bottom left" if ph == "prefill" else "bottom right",
                name=f"{ph} at batch {p['batch']}",
                marker=dict(size=13, color=color, symbol=sym),
                hovertemplate=f"{ph}: %{{x:,.1f}} FLOP/B, %{{y:,.2f}} TFLOP/s achieved<extra></extra>",
            )
        )
    fig.update_xaxes(type="log", title="arithmetic intensity (FLOP per byte moved)", range=[-1, 5], dtick=1)
    fig.update_yaxes(type="log", title="TFLOP/s (dense peaks only)", dtick=1)
    return _layout(fig, f"Roofline: {p['gpu']} x{p['gpu_count']}", height=460)


def sweep_figure(p: dict) -> go.Figure:
    """Decode tokens/s against batch, with the compute-bound batch and the largest batch that fits."""
    sweep = p.get("sweep") or []
    fig = go.Figure(
        go.Scatter(
            x=[s["batch"] for s in sweep],
            y=[s["tokens_per_s"] for s in sweep],
            mode="lines+markers",
            name="decode tokens/s (all sequences)",
            line=dict(color=GPU_COLORS.get(p["gpu"], "#334155")),
        )
    )
    ymax = max([s["tokens_per_s"] for s in sweep] or [1])
    xmax = max([s["batch"] for s in sweep] + [p.get("compute_bound_batch") or 1, p.get("max_batch") or 1])
    if p.get("compute_bound_batch"):
        fig.add_vline(
            x=math.log10(p["compute_bound_batch"]),
            line_dash="dot",
            line_color="#1d4ed8",
            annotation_text=f"matmuls compute-bound at {p['compute_bound_batch']:,}",
        )
    if p.get("max_batch"):
        fig.add_vline(
            x=math.log10(p["max_batch"]),
            line_dash="dash",
            line_color="#dc2626",
            annotation_text=f"largest batch that fits: {p['max_batch']:,}",
            annotation_position="bottom left",
        )
    fig.update_xaxes(type="log", title="batch (concurrent sequences)", range=[-0.1, math.log10(xmax * 1.6)])
    fig.update_yaxes(title="tokens/s", range=[0, ymax * 1.15])
    return _layout(fig, f"Decode throughput vs batch on {p['gpu']}", height=380)


def latency_figure(rows: list[dict]) -> go.Figure:
    ok = [r for r in rows if "ttft_s" in r]
    names = [f"{r['gpu']} x{r['gpu_count']}" for r in ok]
    colors = [GPU_COLORS.get(r["gpu"], "#334155") for r in ok]
    fig = go.Figure()
    fig.add_trace(
        go.Bar(
            name="TTFT (ms)",
            x=names,
            y=[r["ttft_s"] * 1e3 for r in ok],
            marker_color=colors,
            hovertemplate="%{x}: TTFT %{y:,.1f} ms<extra></extra>",
        )
    )
    fig.add_trace(
        go.Bar(
            name="TPOT (ms)",
            x=names,
            y=[r["tpot_s"] * 1e3 for r in ok],
            marker_color=colors,
            marker_pattern_shape="/",
            hovertemplate="%{x}: TPOT %{y:,.2f} ms<extra></extra>",
        )
    )
    fig.update_layout(barmode="group", yaxis_title="milliseconds (log)", yaxis_type="log")
    return _layout(fig, "Time to first token and time per output token, per GPU", height=380)


def lifetime_figure(life: dict, title: str) -> go.Figure:
    months = life["months"]
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=[m["month"] for m in months],
            y=[m["training_usd"] for m in months],
            name="training (once)",
            line=dict(color="#7c3aed", dash="dash"),
        )
    )
    fig.add_trace(
        go.Scatter(
            x=[m["month"] for m in months],
            y=[m["inference_cumulative_usd"] for m in months],
            name="inference, cumulative",
            line=dict(color="#0891b2"),
        )
    )
    be = life.get("inference_passes_training_month")
    if be is not None:
        fig.add_vline(x=be, line_dash="dot", annotation_text=f"inference passes training in month {be}")
    fig.update_xaxes(title="month")
    fig.update_yaxes(title="USD")
    return _layout(fig, title, height=360)


def projection_figure(rows: list[dict], label: str) -> go.Figure:
    fig = go.Figure(
        go.Scatter(
            x=[r["month"] for r in rows],
            y=[r["monthly_usd"] for r in rows],
            mode="lines",
            name=label,
            line=dict(color="#64748b"),
        )
    )
    fig.update_xaxes(title="month")
    fig.update_yaxes(title="USD per month")
    return _layout(fig, label, height=320)


def fmt_bytes(n: float | None) -> str:
    if n is None or (isinstance(n, float) and math.isnan(n)):
        return "-"
    return f"{n / GB:,.2f} GB ({n / 2**30:,.2f} GiB)"
