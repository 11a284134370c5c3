"""The Cost page with growing traffic: the lifetime chart shows the pick re-planned month by month (its monthly
bill as steps, the month it needs more replicas, the month inference passes training), the same numbers as the
core's Growth; without growth the flat chart stays; with no traffic to grow it says why."""

from __future__ import annotations

import json

from gpuplan_core import api, load_pricing, read_link, to_scenario

from .apptest import open_page, texts

LINK = {"model": "Llama-3.1-8B", "rpd": "200000", "growth": "10", "train_bill": "20000"}


def _life(at) -> dict:
    """The lifetime chart: the one whose x axis is months (the market projection is off by default)."""
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    (spec,) = [s for s in specs if s["layout"].get("xaxis", {}).get("title", {}).get("text") == "month"]
    return spec


def test_the_cost_page_draws_the_pick_as_traffic_grows():
    at = open_page("app_pages/Cost.py", LINK)
    assert not at.exception, at.exception
    sc, _ = to_scenario(read_link(LINK)[0])
    assert sc.traffic.monthly_growth == 0.1
    offers = load_pricing().offers
    g = api.growth_report(sc, api.answer_report(sc, offers=offers), offers, 20_000, 36)
    assert g.more_replicas_month is not None and g.inference_passes_training_month is not None
    spec = _life(at)
    bill = [t for t in spec["data"] if t["name"].startswith("monthly bill")][0]
    assert bill["line"]["shape"] == "hv" and bill["y"] == [m.monthly_usd for m in g.months]
    notes = [a["text"] for a in spec["layout"]["annotations"]]
    assert any(n.startswith(f"month {g.more_replicas_month}: {g.next_step_replicas} replicas needed") for n in notes)
    assert any(
        n.startswith(f"inference passes training in month {g.inference_passes_training_month} (about ") for n in notes
    )
    assert "Re-planned month by month with 10% more traffic a month" in texts(at)


def test_without_growth_the_flat_lifetime_stays_and_without_traffic_it_says_why():
    flat = _life(open_page("app_pages/Cost.py", {k: v for k, v in LINK.items() if k != "growth"}))
    assert [t["name"] for t in flat["data"]] == ["training (once)", "inference, cumulative"]
    at = open_page("app_pages/Cost.py", {**LINK, "rpd": "0"})
    assert not at.exception
    assert "Growth is not drawn: growth needs a traffic estimate" in texts(at)


def test_the_spike_states_its_replicas_and_the_money_axes_tick_round():
    """A 4x spike in month 6 on 200,000 requests a day: the chart names the spike month's replicas and bill (the
    core's GrowthMonth), and both money axes tick at round steps labelled "$400k" / "$6M" style."""
    link = {"model": "Llama-3.1-8B", "rpd": "200000", "spike_m": "6", "spike_x": "4"}
    at = open_page("app_pages/Cost.py", link)
    assert not at.exception, at.exception
    sc, _ = to_scenario(read_link(link)[0])
    offers = load_pricing().offers
    g = api.growth_report(sc, api.answer_report(sc, offers=offers), offers, 0.0, 36)
    spike = g.months[6]
    spec = _life(at)
    notes = [a["text"] for a in spec["layout"]["annotations"]]
    assert any(f"the 4x spike takes {spike.replicas:,} replicas" in n for n in notes) or (
        g.more_replicas_month == 6 and any(f"month 6: {g.next_step_replicas} replicas needed" in n for n in notes)
    ), notes
    for axis in ("yaxis", "yaxis2"):
        ticks = spec["layout"][axis]
        step = ticks["tickvals"][1]
        assert all(v == i * step for i, v in enumerate(ticks["tickvals"]))
        assert str(int(step)).rstrip("0") in {"1", "2", "25", "5"}, step  # 1, 2, 2.5 or 5 x 10^k
        assert all(t.startswith("$") and ("," not in t) for t in ticks["ticktext"]), ticks["ticktext"]


def test_a_spike_in_the_month_of_a_step_up_states_its_own_replicas():
    """10% growth a month on 200,000 requests a day steps up in some month M; a 4x spike put in that same month M
    shares its marker, and the marker says the spike's own replica count and bill (the core's GrowthMonth), not only
    the step-up's."""
    from gpuplan_ui.figures_cost import growth_figure

    offers = load_pricing().offers
    sc, _ = to_scenario(read_link(LINK)[0])
    more = api.growth_report(sc, api.answer_report(sc, offers=offers), offers, 0.0, 36).more_replicas_month
    assert more is not None
    link = {**LINK, "spike_m": str(more), "spike_x": "4"}
    sc, _ = to_scenario(read_link(link)[0])
    g = api.growth_report(sc, api.answer_report(sc, offers=offers), offers, 0.0, 36)
    assert g.spike_month == g.more_replicas_month == more
    spike = next(m for m in g.months if m.month == more)
    notes = [a["text"] for a in growth_figure(g, "t").to_dict()["layout"]["annotations"]]
    (marker,) = [n for n in notes if n.startswith(f"month {more}:")]
    assert f"{g.next_step_replicas} replicas needed" in marker
    assert (
        f"the 4x spike takes {spike.replicas:,} replica" in marker
        and f"({spike.monthly_usd:,.0f} USD that month)" in marker
    )


def test_the_market_projection_starts_from_the_answers_monthly_cost():
    """Llama-3.1-70B at 50,000 requests/day and 8,000 input tokens: the cheapest row regardless of targets is not the
    answer (issue 27: 2,467 USD against the answer's 7,139); the projection's month 0 is the answer's cost (it started
    from the cheapest row before), and its caption says so."""
    link = {"model": "Llama-3.1-70B", "rpd": "50000", "in": "8000", "market": "a16z"}
    at = open_page("app_pages/Cost.py", link)
    assert not at.exception, at.exception
    sc, _ = to_scenario(read_link(link)[0])
    ans = api.answer_report(sc, offers=load_pricing().offers)
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    (proj,) = [s for s in specs if (s["data"][0].get("name") or "").startswith("ANALYST ESTIMATE: a16z")]
    assert proj["data"][0]["x"][0] == 0 and proj["data"][0]["y"][0] == ans.cost_usd
    assert ans.cost_usd > api.cost_report(sc, offers=load_pricing().offers).cheapest_monthly_usd  # they differ here
    assert any("from the answer's monthly cost" in c.value for c in at.caption)
