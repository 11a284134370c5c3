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
from gpuplan_core import load_pricing, missing_note, scenario_file
from gpuplan_core.pricing.store import DATA_DIR_ENV, DATABASE_URL_ENV, content_hash
from gpuplan_ui import fetches, share, state
from gpuplan_ui.state import SHARE_OPEN
from tests.postgres import emptied, postgres_url
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
        "raw.githubusercontent.com (offline?). The uploaded file team-prices.csv is still used, with its 1 offer."
    ]
    assert any("Using 1 offer from team-prices.csv" in s.value for s in at.success)
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
    assert "The uploaded file team-prices.csv is still used, with its 1 offer." in err
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
    assert "2 problems in zero.csv; 1 of 3 rows are usable." in at.error[0].value
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


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request, monkeypatch, _data_dir):
    """The store in the data folder (SQLite), or in a real PostgreSQL server (tests/postgres.py) by its URL."""
    if request.param == "postgresql":
        monkeypatch.setenv(DATABASE_URL_ENV, emptied(postgres_url()))
    return request.param


# One B200 at 0.10 USD per hour: cheaper than any bundled offer that serves the default question
CHEAP = pricing_file(
    [
        {
            "offer_id": "team-b200-1x",
            "gpus_per_node": "1",
            "max_gpus_per_node": "1",
            "price_per_gpu_hour_usd": "0.1",
            "price_per_node_hour_usd": "0.1",
        }
    ]
)


def test_an_uploaded_file_is_in_the_link_and_a_new_session_prices_with_it(backend):
    at = upload(run("app_pages/Data.py"), "team-prices.csv", CHEAP)
    key = at.query_params["pricefile"]
    assert key == content_hash(CHEAP)[:16]  # the sha256 of the file's bytes (already normalised), 16 digits
    assert f"Kept on this server as {key}" in " ".join(s.value for s in at.success)
    at.switch_page("app_pages/overview.py").run()
    assert at.query_params["pricefile"] == key  # kept in the link on every page
    answer = _headline(at)
    assert "B200 from aws" in answer and "73.00 a month" in answer  # the team's B200: 0.10 USD x 730 hours
    at.session_state[SHARE_OPEN] = True  # the share box's link (the report's live link is the same address)
    at.run()
    assert any(f"pricefile={key}" in c.value for c in at.code)
    # a reload, a teammate's browser: a new session from the link alone
    again = run("app_pages/overview.py", {"pricefile": key})
    assert not again.exception and _headline(again) == answer
    assert f"Prices: the {BUNDLED} bundled offers + your 1." in texts(again)
    data = run("app_pages/Data.py", {"pricefile": key})
    assert offers_shown(data) == BUNDLED + 1 and "team-b200-1x" in set(data.dataframe[-1].value["offer"])
    assert any(s.value.startswith("Using 1 offer from team-prices.csv") for s in data.success)


def test_a_link_to_a_file_this_server_does_not_hold_says_so_on_every_page_and_uses_the_catalog():
    base = run("app_pages/overview.py")
    for page in ("app_pages/overview.py", "app_pages/Memory.py", "app_pages/Data.py"):
        at = run(page, {"pricefile": "0123456789abcdef"})
        assert not at.exception
        notes = [w.value.replace("\\", "") for w in at.warning]
        assert [n for n in notes if "pricing file 0123456789abcdef" in n] == [missing_note("0123456789abcdef")]
        if page.endswith("overview.py"):
            assert _headline(at) == _headline(base)  # the catalog's answer
        if page.endswith("Data.py"):
            assert offers_shown(at) == BUNDLED and not at.success


def test_the_scenario_file_carries_the_pricing_file_to_a_server_that_does_not_hold_it(_data_dir, tmp_path, monkeypatch):
    at = upload(run("app_pages/Data.py"), "team-prices.csv", CHEAP)
    key = at.query_params["pricefile"]
    values = {**share.all_values(at.session_state[state.RUN].values), "pricefile": key}
    text = scenario_file(values, at.session_state[state.RUN].scenario, "", ("team-prices.csv", CHEAP.decode()))
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path / "another-server"))  # holds no pricing file
    other = run("app_pages/Data.py", {"pricefile": key})
    assert offers_shown(other) == BUNDLED  # the link alone cannot bring the file here
    other.session_state[SHARE_OPEN] = True
    other.run()
    other.file_uploader(key="scenario_upload").set_value(("s.json", text.encode(), "application/json"))
    other.run()
    assert not other.exception
    assert other.query_params["pricefile"] == key  # the same content, the same hash, on this server too
    assert offers_shown(other) == BUNDLED + 1 and "team-b200-1x" in set(other.dataframe[-1].value["offer"])
    assert f"scenario file: prices with its pricing file team-prices.csv ({key})." in texts(other).replace("\\", "")


def test_a_file_the_store_cannot_keep_is_used_in_this_session_only_and_says_so(tmp_path, monkeypatch):
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path / "a-file" / "data"))  # no folder can be made there
    at = upload(run("app_pages/Data.py"), "team-prices.csv", CHEAP)
    assert not at.exception and "pricefile" not in at.query_params
    (warning,) = [w.value for w in at.warning if "Using 1 offer" in w.value]
    assert warning.startswith("Using 1 offer from team-prices.csv. Used in this session only, not in the link: ")
    assert "cannot open the pricing database (SQLite at " in warning.replace("\\", "")
    assert offers_shown(at) == BUNDLED + 1
    at.switch_page("app_pages/overview.py").run()
    assert "B200 from aws" in _headline(at)  # every page of this session still prices with it
