"""Pricing input through the app (AppTest): a file uploaded on the Data page survives a link that cannot be
loaded, a zero or negative price in a file is a row error naming the offer, and "Your prices" refuses a price
of zero or below for that offer alone, saying so on the page."""

import csv
import io
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import gpuplan_core
from gpuplan_core import load_pricing
from gpuplan_core.pricing.store import DATA_DIR_ENV, DATABASE_URL_ENV
from gpuplan_ui import fetches
from tests.ui.apptest import open_page, texts

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
BUNDLED = len(load_pricing().offers)  # 98 offers in data/pricing.csv


@pytest.fixture(autouse=True)
def _data_dir(tmp_path, monkeypatch):
    """Each test keeps its pricing files in a folder of its own (GPUPLAN_DATA_DIR), not in ./gpuplan-data."""
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path / "data"))
    monkeypatch.delenv(DATABASE_URL_ENV, raising=False)
    return tmp_path / "data"


def run(page: str, params: dict | None = None) -> AppTest:
    return open_page(page, params, timeout=90)


def pricing_file(rows: list[dict]) -> bytes:
    """The bundled file's header and first offer, changed by each of `rows` (one offer per dict)."""
    first = next(csv.DictReader(io.StringIO((ROOT / "data" / "pricing.csv").read_text())))
    out = io.StringIO()
    w = csv.DictWriter(out, fieldnames=list(first))
    w.writeheader()
    w.writerows(first | r for r in rows)
    return out.getvalue().encode()


MINE = pricing_file([{"offer_id": "team-h100-od", "price_per_gpu_hour_usd": "", "price_per_node_hour_usd": "1.5"}])


def upload(at: AppTest, name: str, data: bytes) -> AppTest:
    at.file_uploader(key="pricing_file").set_value((name, data, "text/csv"))
    return at.run()


def offers_shown(at: AppTest) -> int:
    """The Data page's last table: every offer in use."""
    return len(at.dataframe[-1].value)


def test_a_failed_link_load_keeps_the_uploaded_file_and_says_so(monkeypatch):
    def offline(url, **kw):
        raise gpuplan_core.pricing.fetch.FetchError("could not reach raw.githubusercontent.com (offline?)")

    monkeypatch.setattr(gpuplan_core, "fetch_pricing", offline)
    fetches._fetch_pricing.clear()
    at = upload(run("app_pages/Data.py"), "team-prices.csv", MINE)
    assert not at.exception and not at.error
    assert offers_shown(at) == BUNDLED + 1  # a new id: added to the 98 bundled offers
    at.text_input(key="pricing_url").input("https://raw.githubusercontent.com/team/prices/main/prices.csv")
    next(b for b in at.button if b.label == "Load").click()
    at.run()
    assert not at.exception
    assert offers_shown(at) == BUNDLED + 1  # still 99, not 98
    assert [e.value for e in at.error] == [
        "Could not load prices from https://raw.githubusercontent.com/team/prices/main/prices.csv: could not reach "
        "raw.githubusercontent.com (offline?). The uploaded file team-prices.csv is still used, with its 1 offers."
    ]
    assert any("Using 1 offers from team-prices.csv" in s.value for s in at.success)
    assert "team-h100-od" in set(at.dataframe[-1].value["offer"])
    at.switch_page("app_pages/Cost.py").run()  # every page still prices with it
    assert f"Prices: the {BUNDLED} bundled offers + your 1." in texts(at)


def test_a_link_that_is_not_allowed_fails_without_the_network_and_keeps_the_upload():
    """No fake: the real fetch refuses a host outside the allowed ones before any connection."""
    fetches._fetch_pricing.clear()
    at = upload(run("app_pages/Data.py"), "team-prices.csv", MINE)
    at.text_input(key="pricing_url").input("http://127.0.0.1:9/x.csv")
    next(b for b in at.button if b.label == "Load").click()
    at.run()
    err = " ".join(e.value for e in at.error)
    assert "Could not load prices from http://127.0.0.1:9/x.csv" in err
    assert "The uploaded file team-prices.csv is still used, with its 1 offers." in err
    assert offers_shown(at) == BUNDLED + 1
    # a later upload that loads clears the failure; removing the file goes back to the bundled offers
    at = upload(at, "other.csv", MINE)
    assert not at.error and offers_shown(at) == BUNDLED + 1
    at.file_uploader(key="pricing_file").set_value(None)
    at.run()
    assert not at.error and offers_shown(at) == BUNDLED and not at.success


def test_a_failed_link_without_an_upload_keeps_the_bundled_prices():
    fetches._fetch_pricing.clear()
    at = run("app_pages/Data.py")
    at.text_input(key="pricing_url").input("http://127.0.0.1:9/x.csv")
    next(b for b in at.button if b.label == "Load").click()
    at.run()
    err = " ".join(e.value for e in at.error)
    assert "Could not load prices from http://127.0.0.1:9/x.csv" in err and "bundled prices stay in use" in err
    assert offers_shown(at) == BUNDLED


def test_a_zero_or_negative_price_in_an_upload_is_a_row_error_naming_the_offer():
    data = pricing_file(
        [
            {"offer_id": "team-free", "price_per_gpu_hour_usd": "0", "price_per_node_hour_usd": ""},
            {"offer_id": "team-minus", "price_per_gpu_hour_usd": "", "price_per_node_hour_usd": "-8"},
            {"offer_id": "team-ok", "price_per_gpu_hour_usd": "2", "price_per_node_hour_usd": ""},
        ]
    )
    at = upload(run("app_pages/Data.py"), "zero.csv", data)
    assert not at.exception
    assert "2 problem(s) in zero.csv; 1 of 3 rows are usable." in at.error[0].value
    problems = list(next(d.value for d in at.dataframe if "problem" in d.value.columns)["problem"])
    assert problems == [
        "line 2 (offer team-free), column price_per_gpu_hour_usd: 0 is not allowed; "
        "allowed: above 0 (> 0 USD per GPU-hour)",
        "line 3 (offer team-minus), column price_per_node_hour_usd: -8 is not allowed; "
        "allowed: above 0 (> 0 USD per node-hour)",
    ]
    used = set(at.dataframe[-1].value["offer"])
    assert "team-ok" in used and not {"team-free", "team-minus"} & used
    assert offers_shown(at) == BUNDLED + 1


def _headline(at: AppTest) -> str:
    return at.success[0].value


def test_your_price_of_zero_is_refused_with_a_note_and_the_catalog_price_stands():
    base = run("app_pages/overview.py", {"model": "Llama-3.1-70B"})
    zero = run("app_pages/overview.py", {"model": "Llama-3.1-70B", "myprice": "verda-1b200-od=0"})
    assert not zero.exception
    assert "$0.00" not in _headline(zero) and "at your price" not in _headline(zero)
    assert _headline(zero) == _headline(base)  # the refused price changes nothing: the catalog's 4.89 stands
    notes = " ".join(w.value for w in zero.warning).replace("\\", "")
    assert (
        "Your prices: verda-1b200-od=0 is refused (allowed: above 0 USD per GPU-hour, at most 100,000); the catalog "
        "price of verda-1b200-od stands."
    ) in notes
    assert "refused" not in " ".join(c.value for c in zero.caption)  # said once, as the link's note


@pytest.mark.parametrize("bad", ["0", "-1.5", "0.00"])
def test_the_other_prices_still_apply_beside_a_refused_one(bad):
    base = run("app_pages/overview.py")
    offer = next(d.value for d in base.dataframe if "offer" in d.value.columns)["offer"].iloc[0]
    at = run("app_pages/overview.py", {"myprice": f"verda-1b200-od={bad},{offer}=0.01"})
    assert "at your price" in _headline(at)
    monthly = float(re.search(r"for \\\$([\d,.]+) a month", _headline(at)).group(1).replace(",", ""))
    assert 0 < monthly < float(re.search(r"for \\\$([\d,.]+) a month", _headline(base)).group(1).replace(",", ""))
    captions = " ".join(c.value for c in at.caption).replace("\\", "")
    assert f"Your prices (1): {offer} $0.01/GPU-hour." in captions
    notes = " ".join(w.value for w in at.warning).replace("\\", "")
    assert f"verda-1b200-od={float(bad):g} is refused" in notes
