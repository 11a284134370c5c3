"""The report's builder (gpuplan_ui/report.py): the app's own figures, copied and laid out for the report's width;
plotly.js inline once and nothing else that a browser would fetch; each chart under its page's answer; the ten
cheapest chart kept as the app draws it. The browser checks of the saved file are in tests/e2e/test_report.py."""

import re

from plotly.offline import get_plotlyjs

from gpuplan_core import OwnReport, api, memory_answer, read_link, to_scenario
from gpuplan_ui import report
from gpuplan_ui.figures import memory_figure
from gpuplan_ui.figures_cost import cheapest_figure
from gpuplan_ui.figures_site import own_vs_rent_figure
from tests.ui.apptest import PRETRAINING_64_H100

TRAINING = PRETRAINING_64_H100
LINK = "http://gpuplan.example/Cost?rpd=50000"


def _scenario(link: dict[str, str] | None = None):
    return to_scenario(read_link(link or {})[0])[0]


def _memory():
    sc = _scenario()
    mem = api.memory_report(sc)
    return sc, mem, memory_figure(mem)


def _own() -> OwnReport:
    """8 x H100 bought at $30,000 a GPU against renting them at $2.20/GPU-hour, 730 h a month, 70 % busy."""
    rent = 2.20 * 8 * 730 * 0.7  # 8,993.6 USD a month
    run = 1_500 + 1_000  # power + hosting a month
    return OwnReport(
        gpu="H100-SXM",
        gpus=8,
        server_usd_per_gpu=30_000,
        server_price_source="test",
        amortisation_years=4,
        utilization=0.7,
        capex_usd=240_000,
        monthly_own_usd=240_000 / 48 + run,
        monthly_capex_usd=240_000 / 48,
        monthly_power_usd=1_500,
        monthly_hosting_usd=1_000,
        monthly_rent_usd=rent,
        rent_usd_per_gpu_hour=2.20,
        break_even_months=240_000 / (rent - run),
    )


def _build(figures, answers=None) -> str:
    sc, mem, _ = _memory()
    return report.build(
        model="Llama-3.1-8B",
        link=LINK,
        scenario_lines=["Model: Llama-3.1-8B"],
        answers=answers or [("Memory", memory_answer(mem, sc))],
        why=[],
        figures=figures,
        prices=[],
    )


def test_a_chart_is_a_copy_laid_out_for_the_reports_width():
    _, _, app_fig = _memory()
    app_title = app_fig.layout.title.text
    assert "<br>" not in app_title or len(app_title.replace("<br>", " ")) > 50  # the app wraps at 50 characters
    fig = report.fitted(app_fig)
    assert fig.layout.width == report.WIDTH_PX == 1040 and fig.layout.autosize is False
    assert fig.layout.title.text == app_title.replace("<br>", " ")  # one line across the report's width
    # the app's height for a one-line title (it adds 20 px a line), plus the room for the axes
    assert fig.layout.height == app_fig.layout.height - 20 * app_title.count("<br>") + 40
    assert fig.layout.margin.t == 30 + 22 and fig.layout.margin.b == 10
    for ax in (fig.layout.xaxis, fig.layout.yaxis):  # tick labels and titles push the margins, titles set off
        assert ax.automargin is True and ax.title.standoff == 8
    assert fig.layout.font.family == report.FONT and "http" not in report.FONT
    assert list(fig.data[0].y) == list(app_fig.data[0].y)  # the same data
    assert app_fig.layout.width is None and app_fig.layout.xaxis.automargin is None  # the app's figure unchanged


def test_a_long_title_wraps_at_the_reports_width_and_the_height_follows():
    fig = own_vs_rent_figure(_own())
    words = "Owning 8 x H100-SXM pays back after 37 months, and here are more words to make the title run long "
    long_title = (words * 3).strip()
    fig.update_layout(title_text=long_title)  # one line as the app set it: no <br>
    out = report.fitted(fig)
    lines = out.layout.title.text.split("<br>")
    assert len(lines) == 3 and all(len(line) <= report.TITLE_CHARS for line in lines)
    assert " ".join(lines) == long_title
    # 340 px (the app's, for one line) + 2 more title lines + the axes + the legend's row
    assert out.layout.height == 340 + 2 * 22 + 40 + 30
    assert out.layout.margin.t == 30 + 3 * 22


def test_a_legend_gets_its_own_row_under_the_axis_title():
    fig = report.fitted(own_vs_rent_figure(_own()))  # owning and renting: two lines, a legend
    legend = fig.layout.legend
    assert (legend.orientation, legend.yref, legend.y, legend.yanchor) == ("h", "container", 0, "bottom")
    assert fig.layout.margin.b == 10 + report.LEGEND_PX
    plain = report.fitted(memory_figure(_memory()[1]))  # every trace showlegend=False: no legend, no row
    assert plain.layout.margin.b == 10  # (the app pins every legend to the bottom; none is drawn here)


def test_plotly_js_is_inline_once_and_nothing_else_is_fetched():
    _, _, mem_fig = _memory()
    text = _build([("Memory", mem_fig), own_vs_rent_figure(_own())])
    js = get_plotlyjs()
    assert text.count(js) == 1 and text.index(js) < text.index("<body>")  # once, in the head, before any chart
    rest = text.replace(js, "")
    assert "plotly.js v" not in rest and rest.count("Plotly.newPlot") == 2  # two charts, no second copy
    assert not re.search(r"<script[^>]*\bsrc=|<link\b|<img\b|<iframe\b|@import|url\(", rest, re.I)
    assert "mathjax" not in rest.lower().replace("mathjaxconfig: 'local'", "")
    assert re.findall(r'href="([^"]*)"', rest) == [LINK]  # the only address in the file: the live link


def test_each_chart_sits_under_its_pages_answer():
    sc, mem, mem_fig = _memory()
    ans = memory_answer(mem, sc)
    own = own_vs_rent_figure(_own())
    text = _build([("Memory", mem_fig), ("Energy, carbon and owning", own)], [("Recommendation", ans), ("Memory", ans)])
    recommendation, memory = text.index("<h2>Recommendation</h2>"), text.index("<h2>Memory</h2>")
    first_chart = text.index('class="plotly-graph-div"')
    assert memory < first_chart  # the memory chart under the Memory answer, none under the Recommendation
    assert recommendation < memory and text.count('class="plotly-graph-div"') == 2
    charts = text.index("<h2>Charts</h2>")  # a chart whose page has no answer here is kept, at the end
    assert first_chart < charts < text.rindex('class="plotly-graph-div"')


def test_the_reports_ten_cheapest_is_the_apps_one_bar_per_offer_cheapest_first():
    """The issue's 64 x H100 link: offers that shared "aws · 4 x H100-SXM, TP 2, PP 2" stacked into one bar; the
    report's copy keeps the app's bars: one per offer, distinct labels, sorted, the cheapest at the top."""
    cost = api.cost_report(_scenario(TRAINING))
    app_fig = cheapest_figure(cost.offers, inference=False)
    bars = report.fitted(app_fig).data[0]
    shown = min(10, len(cost.offers))
    assert len(bars.y) == shown and len(set(bars.y)) == shown  # one bar per offer, each its own label
    runs = sorted(r.run_cost_usd for r in cost.offers)[:shown]
    assert list(bars.x) == runs[::-1]  # plotly draws the last category at the top: the cheapest
    assert list(bars.y) == list(app_fig.data[0].y) and bars.marker.color == app_fig.data[0].marker.color
    assert bars.orientation == "h" and report.fitted(app_fig).layout.barmode in (None, "group")  # never stacked
