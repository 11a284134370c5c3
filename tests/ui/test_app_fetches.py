"""AppTest: what the app fetches, offline and online. A Hugging Face id or a pricing link that cannot be fetched
says so and keeps what it had; a pricing link is added to the bundled offers (or used alone); today's prices from
the SkyPilot catalogs replace the bundled offer of the same id.
"""

from pathlib import Path

from streamlit.testing.v1 import AppTest

from gpuplan_ui import fetches
from tests.ui.apptest import (
    APP,
    COMPARE,
    COST,
    DATA,
    MEMORY,
    OVERVIEW,
    PERF,
    assert_clean,
    run_page,
    texts,
)

ROOT = Path(__file__).resolve().parents[2]


def test_a_hugging_face_id_that_cannot_be_fetched_says_so_and_shows_no_results(monkeypatch):
    """A failed model load: the page says why and shows no numbers (they would be another model's); the last model
    that loaded is offered by name; what the user typed stays."""
    import gpuplan_core.pricing.fetch

    def offline(model_id, **kw):
        raise gpuplan_core.pricing.fetch.FetchError("huggingface.co is not reachable from this server")

    monkeypatch.setattr(gpuplan_core, "fetch_hf_config", offline)
    fetches._fetch_hf_config.clear()
    for page in (MEMORY, OVERVIEW, PERF, COST, COMPARE):
        at = run_page(page, {"src": "Hugging Face config", "hf": "meta-llama/Llama-3.1-8B"})
        assert not at.exception
        error = " ".join(e.value for e in at.error)
        assert "Could not fetch 'meta-llama/Llama-3.1-8B': huggingface.co is not reachable" in error
        assert "Upload its config.json instead" in error and "No results are shown" in error
        assert not at.get("plotly_chart") and not at.dataframe and not at.metric and not at.success
        assert at.sidebar.text_input(key="hf").value == "meta-llama/Llama-3.1-8B"  # what the user typed stays
    # a session that had a model: the page offers it back by name, and one click shows its numbers again
    at = AppTest.from_file(APP, default_timeout=60).switch_page(MEMORY).run()
    at.sidebar.radio(key="src").set_value("config").run()
    at.sidebar.text_input(key="hf").input("meta-llama/Llama-3.1-8B").run()
    back = next(b for b in at.button if b.key == "last_good_model")
    assert back.label == "Show Llama-3.1-8B instead"
    back.click().run()
    assert not at.error and at.metric


def _load_link(at: AppTest, url: str) -> AppTest:
    at.text_input(key="pricing_url").input(url)
    next(b for b in at.button if b.label == "Load").click()
    return at.run()


def test_a_pricing_link_that_cannot_be_fetched_says_so_and_keeps_the_bundled_prices(monkeypatch):
    import gpuplan_core.pricing.fetch

    def offline(url, **kw):
        raise gpuplan_core.pricing.fetch.FetchError("could not reach raw.githubusercontent.com (offline?)")

    monkeypatch.setattr(gpuplan_core, "fetch_pricing", offline)
    fetches._fetch_pricing.clear()
    at = run_page(DATA)
    bundled_rows = len(at.dataframe[-1].value)
    at = _load_link(at, "https://raw.githubusercontent.com/team/prices/main/prices.csv")
    assert not at.exception
    err = " ".join(e.value for e in at.error)
    assert "Could not load prices from https://raw.githubusercontent.com/team/prices/main/prices.csv" in err
    assert "could not reach raw.githubusercontent.com (offline?)" in err and "bundled prices stay in use" in err
    assert at.text_input(key="pricing_url").value.endswith("prices.csv")  # what the user typed stays
    assert len(at.dataframe[-1].value) == bundled_rows


def _one_offer_file(price: float = 0.01) -> str:
    """The bundled file's header and first offer, at another price: one offer of yours with a bundled id."""
    lines = (ROOT / "data" / "pricing.csv").read_text().splitlines()
    import csv
    import io

    rows = list(csv.DictReader(io.StringIO("\n".join(lines[:2]) + "\n")))
    rows[0]["price_per_gpu_hour_usd"] = str(price)
    rows[0]["price_per_node_hour_usd"] = str(price * float(rows[0]["gpus_per_node"]))
    out = io.StringIO()
    w = csv.DictWriter(out, fieldnames=list(rows[0]))
    w.writeheader()
    w.writerows(rows)
    return out.getvalue()


def test_a_pricing_link_is_added_to_the_bundled_offers_and_can_be_used_alone(monkeypatch):
    import gpuplan_core.pricing.fetch
    from gpuplan_core.pricing.csv_file import load_pricing, load_pricing_text

    mine = _one_offer_file()
    monkeypatch.setattr(gpuplan_core, "fetch_pricing", lambda url, **kw: load_pricing_text(mine))
    fetches._fetch_pricing.clear()
    at = _load_link(run_page(DATA), "https://gist.githubusercontent.com/team/abc/raw/prices.csv")
    assert_clean(at)
    n = len(load_pricing().offers)
    assert any("Using 1 offer from https://gist.githubusercontent.com" in s.value for s in at.success)
    table = at.dataframe[-1].value
    assert len(table) == n  # the bundled offers + yours, yours replacing the bundled offer with the same id
    offer_id = load_pricing_text(mine).offers[0].offer_id
    assert table.set_index("offer").loc[offer_id, "USD/GPU-hour"] == 0.01
    assert "1 replace bundled offers with the same id" in texts(at)
    at.switch_page(COST).run()  # every page uses the same prices, and says so
    assert f"Prices: the {n} bundled offers + your 1 (1 replace" in texts(at)
    at.session_state["open_pricing"] = True
    at.run()
    at.sidebar.selectbox(key="prices").set_value("only").run()
    at.switch_page(DATA).run()
    assert len(at.dataframe[-1].value) == 1 and "your 1 offer only" in texts(at)


def test_todays_prices_from_the_skypilot_catalogs_offline_and_online(monkeypatch):
    import gpuplan_core.pricing.fetch
    from gpuplan_core.pricing.csv_file import load_pricing, load_pricing_text

    monkeypatch.setattr(gpuplan_core, "fetch_skypilot_catalogs", lambda **kw: ([], ["aws: offline", "gcp: offline"]))
    fetches._fetch_catalogs.clear()
    at = run_page(DATA)
    n = len(at.dataframe[-1].value)
    next(b for b in at.button if b.label.startswith("Load today's prices")).click()
    at.run()
    assert not at.exception
    assert "Could not load prices from the SkyPilot catalogs: aws: offline; gcp: offline" in " ".join(
        e.value for e in at.error
    )
    assert len(at.dataframe[-1].value) == n  # the bundled prices stay
    fresh = load_pricing_text(_one_offer_file(1.5)).offers
    monkeypatch.setattr(gpuplan_core, "fetch_skypilot_catalogs", lambda **kw: (fresh, ["gcp: offline"]))
    fetches._fetch_catalogs.clear()
    next(b for b in at.button if b.label.startswith("Load today's prices")).click()
    at.run()
    assert any("Using 1 offer from the SkyPilot catalogs (today)" in s.value for s in at.success)
    assert len(at.dataframe[-1].value) == len(load_pricing().offers)  # the same id replaces its bundled offer
