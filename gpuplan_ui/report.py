"""The report to forward: one self-contained HTML file (plotly.js inline, no network needed to open it) with the
scenario and its link, each page's answer and headline numbers, the why-chain, the main charts, and the sources
and dates of the prices used. Pure: reports in, text out (no streamlit).

The report is a fixed-width document: each chart is a copy of the app's own figure (the same builders in
figures*.py) laid out for that width by ``fitted``: its title re-wrapped to the width, room for the tick labels
and axis titles (automargin, the titles set off from the ticks; in the app Streamlit's theme does this), the
legend in its own row under the plot, and the reader's system fonts."""

from __future__ import annotations

import datetime as dt
import html
import string
from collections.abc import Sequence

import plotly.graph_objects as go
from plotly.offline import get_plotlyjs

from gpuplan_core import Answer, Offer

from .figures import wrap

WIDTH_PX = 1040  # the document's text width; every chart is drawn at exactly this width
FONT = 'system-ui, -apple-system, "Segoe UI", sans-serif'  # the reader's own fonts: nothing to fetch
TITLE_CHARS = 105  # a title line at 16 px across WIDTH_PX (the app wraps at 50, for its half-width columns)
TITLE_LINE_PX = 22  # one line of a chart title here; the app's chart_layout adds 20 px per extra line
AXES_PX = 40  # the room for tick labels and axis titles that the app's figures leave to Streamlit's theme
LEGEND_PX = 30  # one row of a horizontal legend under the plot

STYLE = string.Template("""
body { font-family: $font; max-width: ${width}px; margin: 2rem auto; padding: 0 1rem; color: #1f2937;
       line-height: 1.45; }
h1 { font-size: 1.7rem; margin-bottom: .2rem; } h2 { font-size: 1.25rem; margin-top: 2rem; }
.answer { font-size: 1.15rem; background: #ecfdf5; border-radius: .5rem; padding: .8rem 1rem; }
.answer.warn { background: #fffbeb; } .answer.info { background: #eff6ff; }
.numbers { display: flex; gap: 2rem; flex-wrap: wrap; margin: .8rem 0; }
.numbers div { min-width: 9rem; } .numbers .label { color: #6b7280; font-size: .85rem; }
.numbers .value { font-size: 1.6rem; }
table { border-collapse: collapse; font-size: .85rem; } td, th { border: 1px solid #e5e7eb; padding: .25rem .5rem; }
th { text-align: left; vertical-align: bottom; } td { vertical-align: top; }
td.id, td.day { white-space: nowrap; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.small { color: #6b7280; font-size: .85rem; }
.plotly-graph-div { margin: 1rem 0; break-inside: avoid; }
@media print { .modebar-container { display: none; } }
""").substitute(font=FONT, width=WIDTH_PX)


CONFIG = {"displaylogo": False, "responsive": False}  # the chart keeps the report's width


def _shows_legend(fig: go.Figure) -> bool:
    """Whether plotly draws a legend: asked for, or by default two or more traces that go in one."""
    if fig.layout.showlegend is not None:
        return bool(fig.layout.showlegend)
    return sum(tr.showlegend is not False and tr.visible is not False for tr in fig.data) >= 2


def fitted(fig: go.Figure) -> go.Figure:
    """A copy of an app figure laid out for the report's width (the app's figure is left as it was)."""
    out = go.Figure(fig)
    lay = out.layout
    app_title = lay.title.text or ""
    title = wrap(app_title.replace("<br>", " "), TITLE_CHARS)
    title_lines = title.count("<br>") + 1
    legend = _shows_legend(out)
    plot_px = (lay.height or 420) - 20 * app_title.count("<br>")  # the app's height for a one-line title
    out.update_layout(
        title={"text": title, "x": 0, "xref": "container", "font": {"size": 16}},
        width=WIDTH_PX,
        height=plot_px + TITLE_LINE_PX * (title_lines - 1) + AXES_PX + (LEGEND_PX if legend else 0),
        autosize=False,
        margin={"l": 10, "r": 20, "t": 30 + TITLE_LINE_PX * title_lines, "b": 10 + (LEGEND_PX if legend else 0)},
        font={"family": FONT},
    )
    if legend:  # under the x axis title, whatever room that takes (a paper y would follow the plot's height)
        out.update_layout(legend={"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom", "x": 0})
    out.update_xaxes(automargin=True, title_standoff=8)
    out.update_yaxes(automargin=True, title_standoff=8)
    return out


def _answer(title: str, ans: Answer) -> str:
    nums = "".join(
        f'<div><div class="label">{html.escape(h.label)}</div><div class="value">{html.escape(h.value)}</div></div>'
        for h in ans.headlines
    )
    return f'<h2>{html.escape(title)}</h2><p class="answer {ans.tone}">{html.escape(ans.sentence)}</p>' + (
        f'<div class="numbers">{nums}</div>' if nums else ""
    )


def _chart(fig: go.Figure) -> str:
    return fitted(fig).to_html(full_html=False, include_plotlyjs=False, config=CONFIG)


def build(
    *,
    model: str,
    link: str,
    scenario_lines: list[str],
    answers: list[tuple[str, Answer]],
    why: list[str],
    figures: Sequence[go.Figure | tuple[str, go.Figure]],
    prices: list[Offer],
    today: dt.date | None = None,
) -> str:
    """The report's HTML. ``answers``: (page title, its answer) in order; ``figures``: each chart, as
    (page title, figure) to show it under that page's answer, or a bare figure for the Charts section at the end;
    ``prices``: the offers the answers use (each shown with its price, date and source)."""
    day = (today or dt.date.today()).isoformat()
    placed = [f for f in figures if isinstance(f, tuple)]
    loose = [f for f in figures if not isinstance(f, tuple)]
    titles = {t for t, _ in answers}
    loose += [fig for t, fig in placed if t not in titles]  # a chart whose page has no answer here: still shown
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>gpuplan report: {html.escape(model)}</title><style>{STYLE}</style>",
        # plotly.js once, inline: the file opens offline (no CDN, no MathJax)
        f"<script>window.PlotlyConfig = {{MathJaxConfig: 'local'}};</script><script>{get_plotlyjs()}</script>",
        "</head><body>",
        f"<h1>gpuplan report: {html.escape(model)}</h1>",
        f'<p class="small">Made {day}. Reopen it live: <a href="{html.escape(link, quote=True)}">'
        f"{html.escape(link)}</a></p>",
        "<h2>Scenario</h2><ul>" + "".join(f"<li>{html.escape(s)}</li>" for s in scenario_lines) + "</ul>",
    ]
    for i, (title, ans) in enumerate(answers):
        parts.append(_answer(title, ans))
        if i == 0 and why:
            parts.append("<h3>Why this many GPUs, and this cost</h3><ol>")
            parts += [f"<li>{html.escape(w)}</li>" for w in why]
            parts.append("</ol>")
        parts += [_chart(fig) for t, fig in placed if t == title]
    if loose:
        parts.append("<h2>Charts</h2>")
        parts += [_chart(fig) for fig in loose]
    if prices:
        parts.append(
            "<h2>Prices used, with their sources and dates</h2><table><tr><th>offer</th><th>provider</th>"
            "<th>USD per GPU-hour</th><th>price date</th><th>retrieved</th><th>source</th></tr>"
        )
        for p in prices:
            parts.append(
                "<tr>"
                + "".join(
                    f'<td class="{kind}">{html.escape(str(v))}</td>'
                    for kind, v in (
                        ("id", p.offer_id),
                        ("", p.provider),
                        ("num", f"{p.price_per_gpu_hour_usd:,.2f}"),
                        ("day", p.price_as_of or "undated"),
                        ("day", p.retrieved_date or "n/a"),
                        ("", p.source or "n/a"),
                    )
                )
                + "</tr>"
            )
        parts.append("</table>")
    parts.append(
        '<p class="small">Every number comes from gpuplan\'s formulas (Methodology in the app); predicted times '
        "carry the error of comparable published measurements. Prices change: check them before committing.</p>"
    )
    parts.append("</body></html>")
    return "\n".join(parts)
