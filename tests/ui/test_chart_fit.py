"""Charts drawn once: margins that hold the labels (gpuplan_ui/chart_fit.py). The browser side (the served charts'
final margins equal to their requested ones at 1280, 1600 and 1920 px) was checked by hand when the constants were
measured; here, the arithmetic and that each page's headline chart carries its margins."""

import pytest

from gpuplan_core import api
from gpuplan_core.interface.inputs import to_scenario
from gpuplan_ui import chart_fit
from gpuplan_ui.figures import memory_figure


def test_text_px_in_the_chart_font():
    assert chart_fit.text_px("RTX PRO 6000 Blackwell Server Edition") == pytest.approx(193.1, abs=1)  # Chromium
    assert chart_fit.text_px("$7,000") == pytest.approx(33.0, abs=0.5)
    assert chart_fit.text_px("<b>H200</b>") == pytest.approx(chart_fit.text_px("H200") * 1.1)  # bold is wider
    assert chart_fit.text_px("日") == chart_fit._OTHER_PX  # unknown characters err on the wide side


def test_number_text_as_d3_writes_it():
    assert chart_fit.number_text(12141.7, "$,.0f") == "$12,142"
    assert chart_fit.number_text(2708.7, ",.0f") == "2,709"


def test_margins_hold_labels_titles_and_legend():
    # measured in the served app: the Memory chart's labels needed 212 px, the Cost chart's 278 px; a y title and a
    # "2,500" tick 80 px; an x-axis title 65 px under the plot, a one-row legend 29 more
    assert chart_fit.margins(["RTX PRO 6000 Blackwell Server Edition"], y_title=False)["l"] >= 212
    assert chart_fit.margins(["2,709"], y_title=True)["l"] >= 80
    assert chart_fit.margins(["x"], y_title=False)["b"] >= 65
    m = chart_fit.margins(["x"], y_title=False, x_end_label="$12,142", legend=["p95 TTFT", "p50-p95 of requests"])
    assert m["b"] >= 94 and m["r"] >= 20
    assert "r" not in chart_fit.margins(["x"], y_title=False)  # no number at the x axis's end: the default stays
    assert chart_fit.legend_rows([]) == 0
    assert chart_fit.legend_rows(["a very long legend entry " * 2] * 3) == 2  # 3 x ~330 px in a 700 px row


def test_headline_chart_carries_its_margins():
    sc, _ = to_scenario({})
    fig = memory_figure(api.memory_report(sc))
    assert fig.layout.margin.l == chart_fit.margins(list(fig.data[0].y), y_title=False)["l"]
    assert fig.layout.yaxis.automargin  # still on: a label wider than estimated is never cut
