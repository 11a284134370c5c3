"""Energy, carbon and owning (pricing/energy.py, plan/site.py), by hand with the formulas written out."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplan_core import api
from gpuplan_core.hardware.catalog import get_gpu
from gpuplan_core.pricing.energy import co2_kg, energy_kwh, kwh_per_million_tokens, own_vs_rent, power_draw

H100 = get_gpu("H100-SXM")


def test_average_power_is_the_measured_fraction_of_tdp_plus_the_host():
    """data/power.csv: H100 SXM training at 76% of its 700 W TDP (Newkirk et al. 2025, an 8 x H100 node at 76% of
    its 10.2 kW rating) plus 437 W of host per GPU."""
    d = power_draw(H100, "training")
    assert (d.gpu_watts, d.host_watts, d.watts) == (pytest.approx(0.76 * 700), 437, pytest.approx(0.76 * 700 + 437))
    other = power_draw(get_gpu("L4"), "training")  # no row of its own: the default row's fraction
    assert other.fraction == 0.76 and other.gpu_watts == pytest.approx(0.76 * 72)


def test_a_training_runs_energy_by_hand():
    """kWh = GPU-hours x average watts / 1,000 x PUE; CO2 = kWh x grid intensity."""
    kwh = energy_kwh(10_000, 969.0, 1.10)
    assert kwh == pytest.approx(10_000 * 969 / 1000 * 1.10) == pytest.approx(10_659)
    assert co2_kg(kwh, 322) == pytest.approx(10_659 * 322 / 1000)


def test_the_answers_training_energy_is_its_gpu_hours_at_the_sites_figures():
    q = {
        "mode": "training",
        "preset": "Llama-3.1-8B",
        "gpu": "H100-SXM",
        "gpus": 64,
        "training_tokens": 1e11,
        "region": "us-oregon",
    }
    a = api.answer_report(q)
    p, e = a.pick, a.energy
    gpu_hours = p.tp * p.pp * p.replicas * p.wall_hours
    assert e.region == "us-oregon" and (e.pue, e.grid_gco2_per_kwh, e.electricity_usd_per_kwh) == (1.10, 94, 0.0752)
    assert e.energy_kwh == pytest.approx(gpu_hours * (0.76 * 700 + 437) / 1000 * 1.10)
    assert e.energy_cost_usd == pytest.approx(e.energy_kwh * 0.0752)
    assert e.co2_kg == pytest.approx(e.energy_kwh * 94 / 1000)
    assert any(w.label == "Energy" for w in a.why)
    mine = api.answer_report({**q, "pue": 1.5, "grid_gco2_per_kwh": 0}).energy
    assert mine.pue == 1.5 and mine.co2_kg == 0 and mine.energy_kwh == pytest.approx(e.energy_kwh / 1.10 * 1.5)


def test_serving_energy_per_million_tokens_by_hand():
    """The month's kWh / the month's output tokens x 10^6. The chat request at 50,000 requests a day: 50,000 x 300
    output tokens x 730 / 24 = 30.42 days = 456.25M output tokens a month; the GPUs' kWh a month over it."""
    assert kwh_per_million_tokens(658.0, 456.25e6) == pytest.approx(658 / 456.25)  # = 1.44, not 0.73
    a = api.answer_report({"preset": "Llama-3.1-8B", "gpu": "A100-80GB-SXM", "requests_per_day": 50_000})
    p, e = a.pick, a.energy
    watts = 0.82 * 400  # the A100's measured serving fraction, no host share stated
    assert e.power_watts_per_gpu == pytest.approx(watts)
    assert e.monthly_energy_kwh == pytest.approx(p.tp * p.pp * p.replicas * 730 * watts / 1000 * 1.10)
    assert e.monthly_output_tokens == pytest.approx(50_000 * 300 * 730 / 24) == pytest.approx(456.25e6)
    assert e.energy_kwh_per_million_output_tokens == pytest.approx(e.monthly_energy_kwh / 456.25)
    assert e.tokens_per_kwh == pytest.approx(1e6 / e.energy_kwh_per_million_output_tokens)
    assert "50,000 requests a day x 300 output tokens" in e.output_tokens_basis


def test_without_traffic_the_month_counts_the_replicas_capacity_at_the_utilization():
    from gpuplan_core.plan.site import pick_energy
    from gpuplan_core.scenario.scenario import Scenario

    sc = Scenario(preset="Llama-3.1-8B", gpu="A100-80GB-SXM", requests_per_day=None, utilization=0.5)
    pick = _pick(replicas=3, rps=2.0)
    e = pick_energy(sc, pick)
    tokens = 3 * 2.0 * 300 * 730 * 3600 * 0.5  # replicas x req/s x output tokens x seconds a month x busy share
    assert e.monthly_output_tokens == pytest.approx(tokens)
    assert "busy 50%" in e.output_tokens_basis
    assert e.energy_kwh_per_million_output_tokens == pytest.approx(e.monthly_energy_kwh / tokens * 1e6)


def _pick(replicas: int, rps: float, tp: int = 1):
    from tests.picks import pick

    return pick(
        "A100-80GB-SXM",
        tp * replicas,
        tp,
        replicas=replicas,
        monthly_usd=1.0,
        price_per_gpu_hour_usd=1.0,
        requests_per_s_per_replica=rps,
    )


@settings(max_examples=60, deadline=None)
@given(
    rpd=st.one_of(st.none(), st.floats(100, 5e6)),
    out=st.integers(1, 4000),
    hours=st.floats(24, 744),
    util=st.floats(0.05, 1),
    replicas=st.integers(1, 40),
    tp=st.sampled_from([1, 2, 4, 8]),
    rps=st.floats(0.01, 50),
    region=st.sampled_from(["us-average", "us-virginia", "germany", "france", "india", "china", "finland"]),
)
def test_kwh_per_million_times_the_months_tokens_is_the_months_kwh(rpd, out, hours, util, replicas, tp, rps, region):
    """On random scenarios: kWh per 1M output tokens x the month's output tokens / 10^6 = the month's kWh, and the
    month's tokens are the traffic's (requests a day x output tokens x days) whenever a traffic is given."""
    from gpuplan_core.plan.site import pick_energy
    from gpuplan_core.scenario.scenario import Scenario

    sc = Scenario(
        preset="Llama-3.1-8B",
        gpu="A100-80GB-SXM",
        requests_per_day=rpd,
        output_tokens=out,
        hours_per_month=hours,
        utilization=util,
        region=region,
    )
    e = pick_energy(sc, _pick(replicas, rps, tp))
    assert e.energy_kwh_per_million_output_tokens * e.monthly_output_tokens / 1e6 == pytest.approx(e.monthly_energy_kwh)
    if rpd:
        assert e.monthly_output_tokens == pytest.approx(rpd * out * hours / 24)
    assert e.monthly_energy_kwh == pytest.approx(tp * replicas * hours * 0.82 * 400 / 1000 * e.pue)


def test_own_vs_rent_break_even_by_hand_for_eight_h100s():
    """8 x H100 SXM at 37,081 USD each (about Epoch AI's list price), 5 years; 969 W average, 1,137 W peak (700 TDP + 437 host)
    per GPU, PUE 1.10, 0.0892 USD/kWh, 184.06 USD per kW-month; rented at 2.50 USD/GPU-hour, 730 h, busy always:
      capex 296,648; a month: amortisation 296,648 / 60 = 4,944.13; power 8 x 0.969 x 1.10 x 730 x 0.0892 = 555.3;
      hosting 8 x 1.137 x 184.06 = 1,674.2; renting 8 x 2.50 x 730 = 14,600;
      break-even = 296,648 / (14,600 - 555.3 - 1,674.2) = 23.98 months;
      owning wins above u where 14,600 u = 4,944.13 + 1,674.2 + 555.3 u: u = 6,618.3 / 14,044.7 = 47.1%."""
    o = own_vs_rent(8, 37_081, 5, 969, 1137, 1.10, 0.0892, 184.06, 2.50, 730, 1.0)
    assert o.capex_usd == 296_648
    assert o.monthly_capex_usd == pytest.approx(296_648 / 60)
    assert o.monthly_power_usd == pytest.approx(8 * 0.969 * 1.10 * 730 * 0.0892)
    assert o.monthly_hosting_usd == pytest.approx(8 * 1.137 * 184.06)
    assert o.monthly_rent_usd == pytest.approx(14_600)
    assert o.break_even_months == pytest.approx(23.98, abs=0.01)
    assert o.break_even_utilization == pytest.approx(0.471, abs=0.001)
    idle = own_vs_rent(8, 37_081, 5, 969, 1137, 1.10, 0.0892, 184.06, 2.50, 730, 0.2)
    assert idle.break_even_months is None or idle.break_even_months > o.break_even_months


def test_the_answer_owns_with_the_sourced_server_price_or_yours():
    q = {"mode": "training", "preset": "Llama-3.1-8B", "gpu": "H100-SXM", "gpus": 8, "training_tokens": 1e10}
    own = api.answer_report(q).own
    assert own.server_usd_per_gpu == 37_080.5 and "epoch-research" in own.server_price_source
    mine = api.answer_report({**q, "server_usd_per_gpu": 20_000}).own
    assert mine.server_usd_per_gpu == 20_000 and mine.server_price_source == "your price"
    assert mine.capex_usd == 20_000 * mine.gpus
    assert api.answer_report({"preset": "Llama-3.1-8B", "gpu": "L4"}).own is None  # no public L4 server price


def test_price_tiers_are_the_cheapest_offer_of_each_billing_for_the_gpu_type():
    a = api.answer_report(
        {"mode": "training", "preset": "Llama-3.1-8B", "gpu": "H100-SXM", "gpus": 8, "training_tokens": 1e10}
    )
    tiers = {t.billing_model: t for t in a.price_tiers}
    assert set(tiers) <= {"on_demand", "spot", "reserved"} and "on_demand" in tiers
    if "spot" in tiers:
        t = tiers["spot"]
        assert t.effective_usd_per_gpu_hour == pytest.approx(t.price_per_gpu_hour_usd * 1.10)  # restart overhead
    for t in tiers.values():
        assert t.monthly_usd == pytest.approx(t.effective_usd_per_gpu_hour * a.pick.gpus * 730)


def test_owning_never_pays_back_beyond_the_hardwares_life():
    """8 x H100 at 0.80 USD/GPU-hour (a spot rental): 4,680.76 a month renting against 555 power + 1,674 hosting:
    296,648 / 2,451 = 121 months, beyond the 60 months it is amortised over: owning does not pay back."""
    o = own_vs_rent(8, 37_081, 5, 969, 1137, 1.10, 0.0892, 184.06, 0.8015, 730, 1.0)
    assert o.break_even_months is None and o.monthly_own_usd > o.monthly_rent_usd


def test_compare_shows_each_sides_energy_and_carbon():
    from gpuplan_core.pricing.csv_file import load_pricing
    from gpuplan_core.scenario.scenario import Scenario

    a, b = Scenario(preset="Llama-3.1-8B", gpu="H100-SXM"), Scenario(preset="Llama-3.1-8B", gpu="A100-80GB-SXM")
    r = api.compare_report(a, b, load_pricing().offers)
    rows = {d.metric: d for d in r.comparison.rows}
    assert "Energy (run, or a month serving)" in rows and "CO2 (run, or a month serving)" in rows
    # a month of one always-on GPU at the site's PUE 1.10: H100 574 W (82% of 700), A100 328 W (82% of 400)
    assert r.a.energy_kwh == pytest.approx(730 * 0.82 * 700 / 1000 * 1.10)
    assert r.b.energy_kwh == pytest.approx(730 * 0.82 * 400 / 1000 * 1.10)
    assert r.a.co2_kg == pytest.approx(r.a.energy_kwh * 322 / 1000)


def test_an_unknown_region_is_refused_naming_the_field_and_the_choices():
    from gpuplan_core.scenario.scenario import Scenario

    with pytest.raises(ValueError, match=r"region: 'mars' is not one of us-average, us-virginia"):
        Scenario(region="mars")
