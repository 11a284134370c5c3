"""The report to forward: one self-contained HTML file (plotly.js inline, no network needed to open it) with the
scenario and its link, each page's answer and headline numbers, the why-chain, the main charts, and the sources
and dates of the prices used. Pure: reports in, text out (no streamlit)."""

from __future__ import annotations

import datetime as dt
import html

import plotly.graph_objects as go

from gpuplan_core import Answer, Offer

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; max-width: 1040px; margin: 2rem auto;
       padding: 0 1rem; color: #1f2937; line-height: 1.45; }
h1 { font-size: 1.7rem; margin-bottom: .2rem; } h2 { font-size: 1.25rem; margin-top: 2rem; }
.answer { font-size: 1.15rem; background: #ecfdf5; border-radius: .5rem; padding: .8rem 1rem; }
.answer.warn { background: #fffbeb; } .answer.info { background: #eff6ff; }
.numbers { display: flex; gap: 2rem; flex-wrap: wrap; margin: .8rem 0; }
.numbers div { min-width: 9rem; } .numbers .label { color: #6b7280; font-size: .85rem; }
.numbers .value { font-size: 1.6rem; }
table { border-collapse: collapse; font-size: .85rem; } td, th { border: 1px solid #e5e7eb; padding: .25rem .5rem; }
.small { color: #6b7280; font-size: .85rem; }
"""


def _answer(title: str, ans: Answer) -> str:
    nums = "".join(
        f'<div><div class="label">{html.escape(h.label)}</div><div class="value">{html.escape(h.value)}</div></div>'
        for h in ans.headlines
    )
    return f'<h2>{html.escape(title)}</h2><p class="answer {ans.tone}">{html.escape(ans.sentence)}</p>' + (
        f'<div class="numbers">{nums}</div>' if nums else ""
    )


def build(
    *,
    model: str,
    link: str,
    scenario_lines: list[str],
    answers: list[tuple[str, Answer]],
    why: list[str],
    figures: list[go.Figure],
    prices: list[Offer],
    today: dt.date | None = None,
) -> str:
    """The report's HTML. ``answers``: (page title, its answer) in order; ``prices``: the offers the answers
    use (each shown with its price, date and source)."""
    day = (today or dt.date.today()).isoformat()
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>gpuplan report: {html.escape(model)}</title><style>{STYLE}</style></head><body>",
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
    for n, fig in enumerate(figures):
        parts.append(fig.to_html(full_html=False, include_plotlyjs=(n == 0), config={"displaylogo": False}))
    if prices:
        parts.append("<h2>Prices used, with their sources and dates</h2><table><tr><th>offer</th><th>provider</th>"
                     "<th>USD per GPU-hour</th><th>price date</th><th>retrieved</th><th>source</th></tr>")  # fmt: skip
        for p in prices:
            parts.append(
                "<tr>"
                + "".join(
                    f"<td>{html.escape(str(v))}</td>"
                    for v in (
                        p.offer_id,
                        p.provider,
                        f"{p.price_per_gpu_hour_usd:,.2f}",
                        p.price_as_of or "undated",
                        p.retrieved_date or "n/a",
                        p.source or "n/a",
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
