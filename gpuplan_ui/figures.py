"""Pure plotly graph_objects figure builders (no streamlit; testable without a server): the charts' common style
and the Memory page's charts. figures_perf.py holds the Performance page's, figures_cost.py the Cost page's, the
Overview's Pareto front and Compare's.

Every figure takes a typed report from gpuplan_core.api and only lays it out. Layouts use the empty
plotly template ("none"): the app's Streamlit theme styles the charts in the browser anyway, and the default
template added 6.5 kB to every figure and halved Plotly's first-draw speed. Each figure is built in
one go.Figure(data, layout) call with plain dicts (no update_layout / add_vline round trips: those cost
tens of milliseconds per rerun), and lines carry only the points they need.
"""

from __future__ import annotations

import math

import plotly.graph_objects as go

from gpuplan_core import GB, MemoryReport, counted

from . import chart_fit

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
    "draft weights": "#818cf8",
    "draft KV cache": "#fdba74",
    "activation workspace": "#10b981",
    "activations": "#10b981",
    "logits (fp32)": "#14b8a6",
    "CUDA graphs": "#a855f7",
    "CUDA context": "#64748b",
    "communication buffers": "#94a3b8",
    "gradients": "#e11d48",
    "master weights": "#0ea5e9",
    "optimizer states": "#facc15",
    "logits (chunked)": "#14b8a6",
    "LoRA adapter activations": "#34d399",
    "recompute working set": "#047857",
    "FSDP gathered block": "#84cc16",
    "FSDP prefetched block": "#a3e635",
    "FSDP gradient reduce-scatter": "#fb7185",
    "FP8 weight copies": "#c084fc",
    "MXFP8 weight copies": "#c084fc",
    "NVFP4 weight copies": "#c084fc",
    "QLoRA dequantised layer": "#93c5fd",
    "QLoRA bitsandbytes buffers": "#f59e0b",
    "QLoRA 16-bit weights upcast to FP32": "#7c3aed",
    "allocator reserve": "#cbd5e1",
}
PALETTE = ["#1d4ed8", "#f97316", "#10b981", "#a855f7", "#64748b", "#e11d48", "#0ea5e9", "#84cc16", "#facc15"]
NEUTRAL = "#6b7280"
# mid-tone colours that read on light and dark backgrounds alike (annotations and marker lines)
RED, GREEN, BLUE = "#ef4444", "#22c55e", "#3b82f6"


def x_marker(x: float, text: str, color: str = NEUTRAL, y: float = 1.0, **note) -> tuple[dict, dict]:
    """A dotted vertical line at ``x`` across the plot and its label at its top right: (shape, annotation)."""
    shape = {
        "type": "line",
        "xref": "x",
        "yref": "paper",
        "x0": x,
        "x1": x,
        "y0": 0,
        "y1": 1,
        "line": {"color": color, "dash": "dot"},
    }
    return shape, {
        "x": x,
        "xref": "x",
        "yref": "paper",
        "y": y,
        "showarrow": False,
        "xanchor": "left",
        "xshift": 4,
        "text": text,
        **note,
    }


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


def chart_layout(title: str, height: int = 420, **extra) -> dict:
    text = wrap(title)
    extra_lines = text.count("<br>")
    return {
        "title": {"text": text, "x": 0, "font": {"size": 15}},
        "height": height + 20 * extra_lines,
        "margin": {"l": 10, "r": 10, "t": 50 + 20 * extra_lines, "b": 10},
        # the legend under everything, in the figure's own pixels: plotly reserves its rows below the axis title,
        # so it never runs into the x-axis title or ticks at any width (a paper-relative y did, at 1440 px)
        "legend": {"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom", "x": 0},
        "hovermode": "closest",
        "template": "none",
        **extra,
    }


def vline(x: float, text: str, color: str, dash: str, yanchor: str = "top", side: str = "left") -> tuple[dict, dict]:
    """A vertical line on a log x axis and its label beside it (``side`` of the line, at the plot's top or bottom),
    its box 4 px clear of the line."""
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
        "xanchor": "right" if side == "left" else "left",
        "xshift": -4 if side == "left" else 4,
        "yanchor": yanchor,
        "font": {"color": color},
        "bgcolor": "rgba(127,127,127,0.15)",
    }
    return shape, note


def hline(y: float, text: str, color: str) -> tuple[dict, dict]:
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
        "yshift": 2,  # above its line, not on it
        "font": {"color": color},
        "bgcolor": "rgba(127,127,127,0.15)",
    }
    return shape, note


# --- Memory page ---------------------------------------------------------------------------------


def memory_figure(report: MemoryReport) -> go.Figure:
    """What one GPU must hold against what each GPU type offers: a bar per GPU type (usable VRAM x utilization,
    green where the need fits, red where not), the need as one line, nominal VRAM as a tick; each bar says the
    headroom or the shortfall and how many of that GPU the job takes."""
    need = report.per_gpu_bytes / GB
    n = report.layout.gpus
    gpus = sorted(report.gpus, key=lambda g: g.budget_bytes)
    names = [g.label for g in gpus]
    searched = any(g.search is not None for g in gpus)
    fits = [g for g in gpus if (g.search.gpus is not None if searched else g.fits)]

    def say(g) -> str:
        room = g.budget_bytes / GB - need
        digits = 1 if abs(room) < 10 else 0
        if searched:
            return _say_search(g)
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
            "hovertemplate": "%{y}: %{x:,.0f} GB on the label<extra></extra>",
        },
        {
            "type": "bar",
            "orientation": "h",
            "name": "what a job may fill (usable VRAM x utilization)",
            "y": names,
            "x": [g.budget_bytes / GB for g in gpus],
            "marker": {
                # searched: grey where the search has no configuration (not "does not fit": its reason is in words)
                "color": [GREEN if g in fits else NEUTRAL if searched else RED for g in gpus],
                "opacity": 0.8,
                "line": {"color": [BLUE if g.selected else "rgba(0,0,0,0)" for g in gpus], "width": 3},
            },
            "showlegend": False,
            "hovertemplate": "%{y}: %{x:,.1f} GB usable x utilization<extra></extra>",
        },
        {  # each bar's words, starting at its end or, for a bar short of the need, right of the need's line
            "type": "scatter",
            "mode": "text",
            "y": names,
            "x": [max(g.vram_nominal_bytes / GB, need) for g in gpus],
            "text": [say(g) for g in gpus],
            "textposition": "middle right",
            "cliponaxis": False,
            "showlegend": False,
            "hoverinfo": "skip",
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
    if report.pools:  # a split: the line is a decode worker's GPU; a dashed one a prefill worker's
        pre = report.pools[0].per_gpu_bytes / GB
        notes[0]["text"] = f"decode worker: {need:,.1f} GB per GPU"
        shapes.append(shapes[0] | {"x0": pre, "x1": pre, "line": {"color": BLUE, "width": 2, "dash": "dash"}})
        words = f"prefill worker: {pre:,.1f} GB per GPU"
        notes.append(notes[0] | {"x": pre, "y": 0.0, "yanchor": "top", "yshift": -20, "text": words})  # under ticks
    if report.answer is not None and report.pools:
        a = report.answer
        title = (
            f"The answer: {a.gpus:,} x {a.label}, a decode worker's GPU at {need:,.1f} GB and a prefill worker's at "
            f"{pre:,.1f} GB; the layout search runs it on {len(fits)} of {len(gpus)} GPU types"
        )
    elif report.answer is not None:
        a = report.answer
        title = (
            f"The answer: {a.gpus:,} x {a.label} at {need:,.1f} GB per GPU; the layout search runs it on {len(fits)} "
            f"of {len(gpus)} GPU types"
        )
    elif searched:
        title = f"Needs {need:,.1f} GB{per}: the layout search runs it on {len(fits)} of {len(gpus)} GPU types"
    elif fits:
        title = f"Needs {need:,.1f} GB{per}: {len(fits)} of {len(gpus)} GPU types hold it"
    else:
        fewest = report.fewest  # the one the page's answer names
        more = f"; the fewest: {fewest.min_gpus:,} x {fewest.label}" if fewest else ""
        title = f"Needs {need:,.1f} GB{per}: no GPU type holds it at {counted(n, 'GPU')}{more}"
    top = max([need, *(g.vram_nominal_bytes / GB for g in gpus)])
    layout = chart_layout(
        title,
        max(320, 26 * len(gpus) + 120),
        shapes=shapes,
        annotations=notes,
        xaxis={"title": {"text": "GB per GPU (10^9 bytes)"}, "range": [0, top * 1.45]},
        yaxis={"automargin": True},
        bargap=0.25,
        barmode="overlay",
    )
    layout["margin"] |= chart_fit.margins(names, y_title=False)  # drawn once (chart_fit)
    fig = go.Figure(data=data, layout=layout)
    fig.layout.margin.t += 24  # the "needs" label above the plot: a row of its own under the title, never on it
    fig.layout.height += 24
    return fig


def _say_search(g) -> str:
    """A bar's words with the layout search: the count and layout it would use on that type, or that it has none."""
    s = g.search
    if s.gpus is None:  # the search's own reason: no offer of the type, or why its layouts were rejected
        why = s.note.removeprefix("the layout search has no candidate: ")
        why = why.replace("no offer of this GPU type in the prices in use", "no offer in the prices in use")
        return "  no layout: " + (why if len(why) <= 48 else why[:45].rstrip() + "...")
    each = f", {s.per_gpu_bytes / GB:,.1f} GB each" if s.per_gpu_bytes is not None else ""
    return f"  {'the answer: ' if s.answer else ''}{s.layout}{each}" + ("" if s.meets_targets else " (misses a target)")


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
    layout = chart_layout(
        title,
        230,
        barmode="stack",
        xaxis={"title": {"text": "GB (10^9 bytes)"}},
        yaxis={"showticklabels": False},
    )
    return go.Figure(data=data, layout=layout)
