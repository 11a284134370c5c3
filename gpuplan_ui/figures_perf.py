"""The Performance page's charts: the roofline, the batch sweep, every GPU's latency, latency under load (pure
plotly, styled as figures.py says)."""

from __future__ import annotations

import math

import plotly.graph_objects as go

from gpuplan_core import GpuAtLoad, GpuPerf, ServingCurve

from . import chart_fit
from .figures import BLUE, GPU_COLORS, GREEN, NEUTRAL, RED, chart_layout, hline, log_ticks, vline


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
    layout = chart_layout(
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
    # each line's label on its own side: the right-hand line's to its right (in room kept for it past the data), the
    # other's to its left, so neither label runs across the other line however close the two are
    marks = [(p.max_batch, f"largest that<br>fits: {p.max_batch:,}", RED, "dash", "bottom")]
    if p.compute_bound_batch and p.compute_bound_batch <= xmax:
        marks.append((p.compute_bound_batch, f"compute-bound<br>from {p.compute_bound_batch:,}", BLUE, "dot", "top"))
    right = max(m[0] for m in marks)
    shapes, notes = [], []
    for x, text, color, dash, where in marks:
        s, n = vline(x, text, color, dash, where, side="right" if x == right else "left")
        shapes.append(s)
        notes.append(n)
    title = (
        f"Decode steps alone (no prompt, no queue): {ys[0]:,.0f} tokens/s with one request, {ys[-1]:,.0f} with "
        f"{xs[-1]:,} together"
    )
    layout = chart_layout(
        title,
        380,
        shapes=shapes,
        annotations=notes,
        xaxis={
            **log_ticks(1, xmax * 1.5),
            "range": [-0.1, math.log10(xmax * 4)],
            "title": {"text": "users decoded together (batch)"},
        },
        yaxis={"title": {"text": "tokens/s, decode steps only"}, "range": [0, max(ys) * 1.15], "tickformat": ",.0f"},
    )
    return go.Figure(data=data, layout=layout)


def latency_figure(rows: list[GpuAtLoad], at_load: bool = True) -> go.Figure:
    """First-token wait and time per token on every GPU type as the plan runs it (``api.gpus_at_load``: its layout
    and replicas at the scenario's peak, p95 first token; without a traffic estimate, ``at_load`` False, the static
    batch's), fastest first; names on the vertical axis so none is cut."""
    ok = sorted((r for r in rows if r.ttft_s is not None), key=lambda r: r.ttft_s, reverse=True)
    names = [
        f"{r.gpu} x{r.gpu_count}"
        + (f" (x{r.replicas} replicas)" if r.replicas > 1 else "")
        + (", the pick" if r.is_pick else "")
        for r in ok
    ]
    colors = [GPU_COLORS.get(r.gpu, "#334155") for r in ok]
    first = "p95 time to first token at peak (ms)" if at_load else "time to first token (ms)"
    data = [
        {
            "type": "bar",
            "orientation": "h",
            "name": first,
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
            "x": [(r.tpot_s or 0) * 1e3 for r in ok],
            "marker": {"color": colors, "pattern": {"shape": "/"}, "opacity": 0.6},
            "hovertemplate": "%{y}: %{x:,.1f} ms per token<extra></extra>",
        },
    ]
    if ok:
        best, worst = ok[-1], ok[0]
        what = "At your peak the p95 first token is" if at_load else "First token"
        title = (
            f"{what} fastest on {best.gpu} ({best.ttft_s * 1e3:,.0f} ms), slowest on {worst.gpu} "
            f"({worst.ttft_s * 1e3:,.0f} ms)"
        )
    else:
        title = "No GPU type runs the scenario"
    lo = min([(r.tpot_s or r.ttft_s) * 1e3 for r in ok] or [1])
    hi = max([r.ttft_s * 1e3 for r in ok] or [10])
    return go.Figure(
        data=data,
        layout=chart_layout(
            title,
            max(360, 34 * len(ok) + 120),
            barmode="group",
            xaxis={**log_ticks(lo * 0.8, hi * 1.2), "title": {"text": "milliseconds (log scale)"}},
            yaxis={"automargin": True},
        ),
    )


def _line(x: list[float], y: list[float], *, width: float | None = None, line: dict | None = None, **kw) -> dict:
    """A plain line trace (``width`` 0: an invisible edge of a shaded spread)."""
    return {"type": "scatter", "x": x, "y": y, "mode": "lines", "line": line or {"width": width}, **kw}


def _band_rect(x0: float, x1: float) -> dict:
    """The capacity's error band: a green strip behind the curves."""
    return {
        "type": "rect",
        "xref": "x",
        "yref": "paper",
        "x0": x0,
        "x1": x1,
        "y0": 0,
        "y1": 1,
        "line": {"width": 0},
        "fillcolor": "rgba(22, 163, 74, 0.10)",
        "layer": "below",
    }


def load_figure(curve: ServingCurve, which: str) -> go.Figure:
    """TTFT (``which="ttft"``: p95, with the p50-p95 spread of the simulated requests shaded and the calibration's
    band around p95) or TPOT (``"tpot"``: the mean, with the p50-p95 spread of the gaps between tokens) of one
    replica against the request rate, with the target, the capacity within the targets (and its band) and the
    traffic's peak per replica (the peak over the replicas it needs) marked. The curve is drawn through the points
    the core sampled (``ServingCurve.points``: densely around the capacity, the capacity itself among them)."""
    pts = [p for p in curve.points if not p.saturated]
    x = [p.requests_per_s for p in pts]
    color = GPU_COLORS.get(curve.gpu, "#334155")
    if which == "ttft":
        main = [p.ttft_p95_s * 1e3 for p in pts]
        lo, hi = [p.ttft_p50_s * 1e3 for p in pts], main
        names = ("p95 TTFT", "p50-p95 of requests")
        band = curve.error_band.ttft_p95_s.band
        target, what, ytitle = curve.ttft_target_s, "p95 wait for the first token", "time to first token (ms)"
    else:
        main = [p.tpot_mean_s * 1e3 for p in pts]
        lo = [p.tpot_p50_s * 1e3 for p in pts]
        hi = [(p.itl_p95_s or p.tpot_p50_s) * 1e3 for p in pts]
        names = ("mean TPOT", "p50-p95 gap between tokens")
        band = curve.error_band.tpot_mean_s.band
        target, what, ytitle = curve.tpot_target_s, "time per output token", "time per output token (ms)"
    fill = "rgba(100, 116, 139, 0.18)"
    data = [_line(x, lo, width=0, showlegend=False, hoverinfo="skip")]
    data.append(_line(x, hi, width=0, fill="tonexty", fillcolor=fill, name=names[1]))
    band_name = [f"model error band (±{band:.0%})"] if band else []
    if band:
        dotted = {"color": color, "width": 1, "dash": "dot"}
        data.append(_line(x, [v * (1 + band) for v in main], line=dotted, name=band_name[0]))
        data.append(_line(x, [v * (1 - band) for v in main], line=dotted, showlegend=False, hoverinfo="skip"))
    data.append(
        {"type": "scatter", "x": x, "y": main, "mode": "lines", "name": names[0], "line": {"color": color, "width": 3}}
    )
    median = [v * (1 + (band or 0)) for v in main] + hi
    ys = main + median + ([target * 1e3] if target else [])
    shapes, notes = [], []
    if target:
        s, n = hline(target * 1e3, f"target {target * 1e3:,.0f} ms", RED)
        shapes.append(s)
        notes.append(n)
    cap = curve.capacity_requests_per_s
    if cap:
        s, n = vline(cap, f"capacity {cap:,.2f} req/s", GREEN, "dash")
        shapes.append(s)
        notes.append(n)
        if cap_band := curve.error_band.capacity_requests_per_s.band:
            shapes.append(_band_rect(cap * (1 - cap_band), cap * (1 + cap_band)))
    if (at_peak := curve.peak_per_replica_requests_per_s) and x and min(x) <= at_peak <= max(x):
        s, n = vline(at_peak, f"your peak {at_peak:,.2f} req/s per replica", NEUTRAL, "dot", "bottom", side="left")
        n |= {"y": 0.5, "yanchor": "middle"}  # half-way up: clear of the curve (flat below the knee) and the capacity
        s |= {"y1": 0.85}  # stops under the top row, where the capacity's label may reach across it
        shapes.append(s)
        notes.append(n)
    sat = curve.max_requests_per_s
    if cap:
        title = f"The {what} stays within the target up to {cap:,.2f} requests/s per replica"
    else:
        title = f"The {what} grows with load; one replica saturates at {sat:,.2f} requests/s"
    layout = chart_layout(
        title,
        360,
        shapes=shapes,
        annotations=notes,
        xaxis={**log_ticks(min(x or [0.01]), max(x or [1])), "title": {"text": "requests per second (one replica)"}},
        yaxis={"title": {"text": ytitle}, "range": [0, max(ys) * 1.15], "tickformat": ",.0f"},
    )
    legend = [names[1], *band_name, names[0]]  # the traces the legend shows, in order
    top = chart_fit.number_text(max(ys) * 1.15, ",.0f")  # the range's end: at least as wide as its top tick
    layout["margin"] |= chart_fit.margins([top], y_title=True, legend=legend)  # drawn once (chart_fit)
    return go.Figure(data=data, layout=layout)
