"""Owning vs renting over time (the Cost page's chart; pure plotly, styled as figures.py says)."""

from __future__ import annotations

import plotly.graph_objects as go

from gpuplan_core import OwnReport

from .figures import BLUE, chart_layout, x_marker

OWN = "#7c3aed"


def own_vs_rent_figure(own: OwnReport, months: int = 60) -> go.Figure:
    """Cumulative spend: owning (the purchase up front, then power and hosting) against renting the same GPUs, with
    the break-even month marked where there is one."""
    rows = own.cumulative(months)
    data = [
        go.Scatter(x=[m for m, _, _ in rows], y=[o for _, o, _ in rows], name="owning", line={"color": OWN}),
        go.Scatter(x=[m for m, _, _ in rows], y=[r for _, _, r in rows], name="renting", line={"color": BLUE}),
    ]
    be = own.break_even_months
    shapes, notes = [], []
    if be is not None and be <= months:
        line, note = x_marker(be, f" owning pays back in month {be:,.0f}", yanchor="bottom")
        shapes.append(line)
        notes.append(note)
    title = (
        f"Owning {own.gpus:,} x {own.gpu} pays back after {be:,.0f} months"
        if be is not None
        else f"Owning {own.gpus:,} x {own.gpu} does not pay back within {own.amortisation_years:g} years at "
        f"{own.utilization:.0%} use"
    )
    return go.Figure(
        data=data,
        layout=chart_layout(
            title,
            340,
            shapes=shapes,
            annotations=notes,
            xaxis={"title": {"text": "month"}},
            yaxis={"title": {"text": "USD, cumulative"}, "tickformat": "$,.0f"},
        ),
    )
