"""The answer's energy, owning and price tiers (plan/site.py), by hand: what they read of the question (SiteAsk) and
the arithmetic applied to a pick at the site's figures."""

import pytest

from gpuplan_core.hardware.catalog import get_gpu
from gpuplan_core.plan.site import SiteAsk, pick_energy, pick_own, price_tiers
from gpuplan_core.pricing.csv_file import load_pricing
from gpuplan_core.pricing.energy import power_draw, site_figures
from gpuplan_core.scenario.scenario import Scenario
from tests.picks import pick

TRAIN = Scenario(mode="training", params=7e9, training_tokens=1e11, region="us-oregon")
OFFERS = load_pricing().offers


def _pick(gpu="H100-SXM", gpus=16, tp=1, pp=1, replicas=16, wall_hours=100.0, rps=None, price=2.0):
    return pick(
        gpu,
        gpus,
        tp,
        pp,
        nodes=2,
        replicas=replicas,
        monthly_usd=None,
        run_cost_usd=1.0,
        wall_hours=wall_hours,
        price_per_gpu_hour_usd=price,
        requests_per_s_per_replica=rps,
    )


def test_the_ask_is_the_site_the_prices_terms_the_phase_and_the_output_tokens():
    ask = SiteAsk.of(TRAIN)
    assert (ask.site, ask.pricing, ask.phase) == (TRAIN.site, TRAIN.pricing, "training")
    serve = SiteAsk.of(Scenario(requests_per_day=50_000, output_tokens=500))
    assert (serve.phase, serve.requests_per_day, serve.output_tokens) == ("serving", 50_000, 500)
    assert SiteAsk.of(ask) is ask
    assert SiteAsk.of(TRAIN.with_(training_tokens=1e12, zero_stage=3)) == ask  # the job is not read


def test_a_training_picks_energy_by_hand():
    """kWh = busy GPUs x wall hours x (TDP x 76% + host) / 1,000 x PUE: 16 x 100 h x (532 + 437) W / 1,000 x 1.10
    (us-oregon) = 1,705.4 kWh; the cost at 0.0752 USD/kWh, CO2 at 94 g/kWh."""
    e = pick_energy(TRAIN, _pick())
    assert power_draw(get_gpu("H100-SXM"), "training").watts == pytest.approx(0.76 * 700 + 437) == 969
    assert e.energy_kwh == pytest.approx(16 * 100 * 969 / 1000 * 1.10) == pytest.approx(1705.44)
    assert e.energy_cost_usd == pytest.approx(1705.44 * 0.0752)
    assert e.co2_kg == pytest.approx(1705.44 * 94 / 1000)
    assert pick_energy(SiteAsk.of(TRAIN), _pick()) == e  # the ask answers as the scenario


def test_only_the_busy_gpus_draw():
    """A whole node rented for fewer idles the rest: 9 GPUs billed, TP 2 x 4 replicas = 8 drawing power."""
    e = pick_energy(TRAIN, _pick(gpus=9, tp=2, replicas=4))
    assert e.gpus == 8 and e.energy_kwh == pytest.approx(8 * 100 * 969 / 1000 * 1.10)


def test_owning_by_hand():
    """capex = server price x GPUs; a month of capex = capex / (5 years x 12); rent = price x GPUs x 730 h x 1.0."""
    sc = TRAIN.with_(server_usd_per_gpu=30_000.0, own_utilization=1.0)
    o = pick_own(sc, _pick(price=2.0))
    assert o.server_price_source == "your price" and o.capex_usd == 30_000 * 16
    assert o.monthly_capex_usd == pytest.approx(30_000 * 16 / (5 * 12)) == pytest.approx(8000)
    assert o.monthly_rent_usd == pytest.approx(2.0 * 16 * 730) == pytest.approx(23_360)
    site = site_figures("us-oregon", None, None, None)
    assert o.monthly_power_usd == pytest.approx(16 * 969 / 1000 * site.pue * 730 * site.usd_per_kwh)


def test_the_price_tiers_are_the_cheapest_offer_of_each_billing_model():
    """For 8 x H100 SXM: the cheapest on-demand and spot offers that can couple 8 GPUs; spot's effective price
    adds the 10% restart overhead, a month is 730 h."""
    p = _pick(gpus=8, replicas=8)
    tiers = {t.billing_model: t for t in price_tiers(TRAIN, p, OFFERS)}
    for bm in ("on_demand", "spot"):
        ok = [
            o
            for o in OFFERS
            if o.gpu == "H100-SXM"
            and o.billing_model == bm
            and not o.is_serverless
            and (o.machine_gpus >= 8 or o.fast_network)
        ]
        low = min(o.price_per_gpu_hour_usd for o in ok)
        assert tiers[bm].price_per_gpu_hour_usd == low
    spot = tiers["spot"]
    assert spot.effective_usd_per_gpu_hour == pytest.approx(spot.price_per_gpu_hour_usd * 1.10)
    assert spot.monthly_usd == pytest.approx(spot.effective_usd_per_gpu_hour * 8 * 730)
    assert tiers["on_demand"].effective_usd_per_gpu_hour == tiers["on_demand"].price_per_gpu_hour_usd
