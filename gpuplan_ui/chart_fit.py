"""Chart margins that already hold what Plotly's automargin would make room for, so that a chart is drawn once.

Streamlit's chart theme turns automargin on for every axis. Plotly draws the chart, measures its tick labels, axis
titles and legend, and where they need more room than the layout's margins it draws the whole chart a second time.
Streamlit 1.67 draws a chart anew on every change (the element's id hashes the figure, so a new figure is a new
element), so the second draw was paid on every slider step. Plotly.newPlot of each page's headline chart with
Streamlit's own Plotly (4.2) and theme in Chromium, before -> with these margins (median of 3 x 21 draws, 5 Dec 2026):
Memory 26.7 -> 11.9 ms, Cost 28.0 -> 18.3 ms, Performance 28.3 -> 12.6 ms, Overview 16.2 -> 7.7 ms.

The margins below are computed from the labels' widths in the theme's font (Source Sans, 12 px ticks, 14 px axis
titles) and the offsets Plotly adds, both measured in the served app (1600 px window). Automargin stays on: a label
wider than estimated costs the second draw, never a cut label; an estimate a few pixels wide leaves a few pixels
blank.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

# Source Sans at 12 px: each character's advance width in px (canvas measureText in Chromium, Streamlit's font).
_WIDTHS = {
    2.4: " ",
    2.9: "|",
    3.0: "',.:;ij·’",
    3.1: "l",
    3.2: "I",
    3.5: "!f",
    3.6: "()[]{}",
    3.7: "-",
    4.1: "t",
    4.2: "/\\r",
    5.0: "*s",
    5.1: '"?z',
    5.3: "x",
    5.5: "c",
    5.6: "vy",
    5.7: "Y",
    5.8: "JL–",
    5.9: "Fk",
    6.0: "#$+0123456789<=>^_aeg~×",
    6.2: "VX",
    6.3: "E",
    6.4: "ST",
    6.5: "AZ`hou",
    6.6: "bn",
    6.7: "dpq",
    6.8: "CPR",
    7.0: "K",
    7.1: "B",
    7.3: "&",
    7.4: "DG",
    7.7: "U",
    7.8: "HN",
    8.0: "OQ",
    8.6: "w",
    8.7: "M",
    9.4: "W",
    9.6: "—",
    9.9: "%m",
    10.2: "@",
}
_PX = {c: w for w, chars in _WIDTHS.items() for c in chars}
_OTHER_PX = 8.0  # a character not in the table (wider than most: an estimate errs on the wide side)
_BOLD = 1.1  # <b>...</b>: Source Sans Bold is ~6% wider in digits, up to ~10% in letters

Y_LABELS_PX = 19  # from the y tick labels' left edge to the figure's edge (the theme's 8 px pad and the gap)
Y_TITLE_PX = 35  # a y-axis title (14 px) and its standoff, left of the tick labels
X_TITLED_PX = 68  # under the plot: x tick labels, the theme's 20 px standoff and a 14 px axis title, the pad
LEGEND_ROW_PX = 29  # one row of a horizontal legend under the axis title
LEGEND_ITEM_PX = 40  # a legend item's symbol and the gap after its text
LEGEND_ROW_WIDTH_PX = 700  # the width a legend row is packed into (a chart in the main column at 1280 px)


def text_px(text: str) -> float:
    """The width of a label in the chart font, in px (``<b>`` ... ``</b>``: bold; other tags are dropped)."""
    plain = re.sub(r"<[^>]*>", "", text)
    px = sum(_PX.get(c, _OTHER_PX) for c in plain)
    return px * _BOLD if "<b>" in text else px


def number_text(value: float, tickformat: str) -> str:
    """A number as a d3 tick format of the simple kinds the charts use ("$,.0f", ",.0f", ".1f") writes it."""
    money = tickformat.startswith("$")
    return ("$" if money else "") + format(value, tickformat.removeprefix("$"))


def legend_rows(names: Sequence[str]) -> int:
    """Rows a horizontal legend of these items takes in a chart of the main column at 1280 px."""
    rows, used = (1 if names else 0), 0.0
    for name in names:
        w = text_px(name) + LEGEND_ITEM_PX
        if used and used + w > LEGEND_ROW_WIDTH_PX:
            rows, used = rows + 1, 0.0
        used += w
    return rows


def margins(
    y_labels: Sequence[str],
    *,
    y_title: bool,
    x_title: bool = True,
    x_end_label: str | None = None,
    legend: Sequence[str] | None = None,
) -> dict[str, int]:
    """The left, right and bottom margins (px) that hold the y tick labels (the widest of ``y_labels``; for a number
    axis, its top value as the axis writes it), the y-axis title, half of a last x tick label at the plot's right end
    (``x_end_label``), the x-axis title and a legend under it (its items' names)."""
    left = max((text_px(t) for t in y_labels), default=0.0) + Y_LABELS_PX + (Y_TITLE_PX if y_title else 0)
    out = {"l": math.ceil(left) + 2}
    if x_end_label is not None:
        out["r"] = max(10, math.ceil(text_px(x_end_label) / 2) + 6)
    if x_title:
        out["b"] = X_TITLED_PX + LEGEND_ROW_PX * legend_rows(legend or [])
    return out
