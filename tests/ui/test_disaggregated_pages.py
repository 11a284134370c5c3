"""A disaggregated answer on the pages: the Performance page speaks of the split's pools, not of one aggregated
copy, and the Cost page headlines both pools' GPUs at the split's price (tests/core/plan/test_disaggregated.py has
the figures)."""

from __future__ import annotations

import json

from tests.ui.apptest import open_page

LINK = {"model": "Llama-3.1-8B", "gpu": "H100-SXM", "rpd": "500000", "in": "8000", "out": "200"}
LINK |= {"ttft_ms": "2000", "tpot_ms": "15"}


def _texts(at) -> str:
    return " ".join(str(e.value) for e in [*at.markdown, *at.info, *at.success, *at.warning])


def test_the_performance_page_speaks_of_the_split():
    at = open_page("app_pages/Performance.py", LINK, sections=False)
    assert not at.exception
    text = _texts(at)
    assert "On the split 4 x (1 x H100-SXM, TP 1) prefill + 1 x (2 x H100-SXM, TP 2) decode, the recommended" in text
    assert "one copy of the model serves" not in text


def test_the_cost_page_headlines_both_pools():
    at = open_page("app_pages/Cost.py", LINK, sections=False)
    assert not at.exception
    assert "The cheapest option that meets your targets is 6 x H100 SXM from vast (on-demand) at \\$8,191" in _texts(at)


def test_the_cost_page_prices_the_split_where_the_answer_does():
    """One answer: the Cost page's cheapest always-on and its chart's top bar are the split's $8,191 on vast, not
    the aggregated 4 replicas of TP 2 at $10,921 (the split's offer row is the split)."""
    at = open_page("app_pages/Cost.py", LINK, sections=True)
    assert not at.exception
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Cheapest per month"] == metrics["Cheapest always-on"] == "$8,191"
    titles = [json.loads(c.proto.spec)["layout"]["title"]["text"].replace("<br>", " ") for c in at.get("plotly_chart")]
    cheapest = next(t for t in titles if t.startswith("Cheapest that meets your targets"))
    assert cheapest.startswith("Cheapest that meets your targets: vast · 6 x H100-SXM (P/D: 4 prefill TP 1 + 1 ")
    assert cheapest.endswith("at $8,191 a month, always on")


def test_the_memory_page_shows_both_pools_and_the_overview_names_the_decode_worker():
    """The Memory page's headlines are each pool's worker (tests/core/memory/test_pools.py: the memory engine's at
    its layout); the Overview's memory figure says it is a decode worker's."""
    at = open_page("app_pages/Memory.py", LINK, sections=False)
    assert not at.exception
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Memory per GPU (decode worker)"] == "16.8 GB"
    assert metrics["Prefill worker, per GPU"] == "28.0 GB"
    text = _texts(at).replace("\\", "")
    assert "each of the 4 prefill workers (1 x H100-SXM, TP 1) needs 28.0 GB per GPU" in text
    assert "the decode worker (2 x H100-SXM, TP 2) needs 16.8 GB per GPU" in text
    chart = json.loads(at.get("plotly_chart")[0].proto.spec)["layout"]
    title = chart["title"]["text"].replace("<br>", " ")
    assert title.startswith("The answer: 6 x H100 SXM, a decode worker's GPU at 16.8 GB and a prefill worker's at 28.0")
    lines = sorted(round(sh["x0"], 1) for sh in chart["shapes"] if sh["type"] == "line")
    assert lines == [16.8, 28.0]  # GB: each pool's worker, the memory engine's (tests/core/memory/test_pools.py)
    over = open_page("app_pages/overview.py", LINK, sections=False)
    assert not over.exception
    head = next(m for m in over.metric if m.label.startswith("Memory per GPU"))
    assert (head.label, head.value) == ("Memory per GPU (decode worker)", "16.8 GB")
    assert "one GPU of a prefill worker (1 x H100-SXM, TP 1) holds 28.0 GB" in head.help
