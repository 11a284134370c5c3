"""Pricing input in a real browser (Debian chromium): an uploaded pricing file stays in use when a link then fails
to load (this server cannot fetch it: the host is not one it loads from, and nothing listens on port 9); it is in
the link, so a reload and a second browser price with the same offers, and a link to a file the server does not
hold says so; a price of zero in "Your prices" is refused with a note instead of a $0.00 headline."""

import csv
import io
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from gpuplan_core import load_pricing
from gpuplan_core.pricing.store import content_hash
from tests.e2e.conftest import open_app, screenshot, wait_for_app

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = len(load_pricing().offers)  # 98


def _team_file(path: Path) -> Path:
    """The bundled file's header and first offer under a new id: one offer added to the bundled ones."""
    first = next(csv.DictReader(io.StringIO((ROOT / "data" / "pricing.csv").read_text())))
    out = io.StringIO()
    w = csv.DictWriter(out, fieldnames=list(first))
    w.writeheader()
    w.writerow(first | {"offer_id": "team-h100-od", "price_per_gpu_hour_usd": "", "price_per_node_hour_usd": "1.5"})
    path.write_text(out.getvalue())
    return path


def test_a_failed_link_load_keeps_the_uploaded_file(page, app_url, tmp_path):
    open_app(page, f"{app_url}/Data")
    main = page.get_by_test_id("stMainBlockContainer")
    main.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(_team_file(tmp_path / "team-prices.csv")))
    wait_for_app(page)
    expect(page.get_by_text("Using 1 offer from team-prices.csv")).to_be_visible()
    expect(page.get_by_text(f"{BUNDLED + 1} offers in use.")).to_be_visible()
    link = main.get_by_role("textbox", name="or load one from a link")
    link.fill("http://127.0.0.1:9/x.csv")
    main.get_by_role("button", name="Load", exact=True).click()
    wait_for_app(page)
    error = main.get_by_test_id("stAlertContentError")
    expect(error.first).to_contain_text("Could not load prices from http://127.0.0.1:9/x.csv")
    expect(error.first).to_contain_text("The uploaded file team-prices.csv is still used, with its 1 offer.")
    expect(page.get_by_text("Using 1 offer from team-prices.csv")).to_be_visible()
    expect(page.get_by_text(f"{BUNDLED + 1} offers in use.")).to_be_visible()  # 99, not 98
    expect(main.get_by_test_id("stFileUploader")).to_contain_text("team-prices.csv")  # the file is still there
    assert "Traceback" not in page.content()
    screenshot(page, "Data-link-failed-upload-kept")


def test_your_price_of_zero_is_refused_on_the_page(page, app_url):
    open_app(page, f"{app_url}/?model=Llama-3.1-70B&myprice=verda-1b200-od%3D0")
    main = page.get_by_test_id("stMainBlockContainer")
    expect(
        main.get_by_text(re.compile(r"verda-1b200-od=0 is refused \(allowed: above 0 USD per GPU-hour"))
    ).to_be_visible()
    headline = main.get_by_test_id("stAlertContentSuccess").first
    expect(headline).to_contain_text("Rent")
    expect(headline).not_to_contain_text("$0.00")
    expect(headline).not_to_contain_text("at your price")


def _cheap_file(path: Path) -> Path:
    """One B200 at 0.10 USD per hour: cheaper than any bundled offer that serves the default question."""
    first = next(csv.DictReader(io.StringIO((ROOT / "data" / "pricing.csv").read_text())))
    out = io.StringIO()
    w = csv.DictWriter(out, fieldnames=list(first))
    w.writeheader()
    w.writerow(
        first
        | {"offer_id": "team-b200-1x", "gpus_per_node": "1", "max_gpus_per_node": "1"}
        | {"price_per_gpu_hour_usd": "0.1", "price_per_node_hour_usd": "0.1"}
    )
    path.write_text(out.getvalue())
    return path


def _answer(pg) -> str:
    return pg.get_by_test_id("stMainBlockContainer").get_by_test_id("stAlertContentSuccess").first.inner_text()


def test_an_uploaded_file_is_in_the_link_for_a_reload_and_a_second_browser(browser, page, app_url, tmp_path):
    mine = _cheap_file(tmp_path / "team-cheap.csv")
    key = content_hash(mine.read_bytes())[:16]
    open_app(page, f"{app_url}/Data")
    page.get_by_test_id("stMainBlockContainer").get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(mine))
    wait_for_app(page)
    expect(page.get_by_text("Using 1 offer from team-cheap.csv")).to_be_visible()
    expect(page).to_have_url(re.compile(rf"[?&]pricefile={key}(&|$)"))
    page.get_by_test_id("stSidebar").get_by_role("link", name="Overview & recommendation").click()
    wait_for_app(page)
    expect(page).to_have_url(re.compile(rf"[?&]pricefile={key}(&|$)"))  # the page link carries it
    answer = _answer(page)
    assert "B200 from aws" in answer and "73.00 a month" in answer  # the team's B200: 0.10 USD x 730 hours
    link = page.url
    page.reload()  # a new session from the link alone
    wait_for_app(page)
    assert _answer(page) == answer
    other = browser.new_context(viewport={"width": 1600, "height": 1000})  # a teammate's browser
    try:
        pg = other.new_page()
        open_app(pg, link)
        assert _answer(pg) == answer
        expect(pg.get_by_text(f"Prices: the {BUNDLED} bundled offers + your 1.")).to_be_visible()
        open_app(pg, f"{app_url}/Data?pricefile={key}")
        expect(pg.get_by_text("Using 1 offer from team-cheap.csv")).to_be_visible()
        expect(pg.get_by_text(f"{BUNDLED + 1} offers in use.")).to_be_visible()
        screenshot(pg, "Data-pricing-file-from-link")
    finally:
        other.close()


def test_a_link_to_a_pricing_file_this_server_does_not_hold_says_so(page, app_url):
    open_app(page, f"{app_url}/Memory?pricefile=0123456789abcdef")
    note = re.compile(r"This link names the pricing file 0123456789abcdef, which this server does not hold")
    expect(page.get_by_text(note)).to_be_visible()
    page.get_by_test_id("stSidebar").get_by_role("link", name="Overview & recommendation").click()
    wait_for_app(page)
    expect(page.get_by_text(note)).to_be_visible()
    expect(page.get_by_text(re.compile("the answers use the catalog's prices"))).to_be_visible()
    assert "Traceback" not in page.content()
