"""Pricing input in a real browser (Debian chromium): an uploaded pricing file stays in use when a link then fails
to load (this server cannot fetch it: the host is not one it loads from, and nothing listens on port 9), and a
price of zero in "Your prices" is refused with a note instead of a $0.00 headline."""

import csv
import io
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from gpuplan_core import load_pricing
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
    expect(page.get_by_text("Using 1 offers from team-prices.csv")).to_be_visible()
    expect(page.get_by_text(f"{BUNDLED + 1} offers in use.")).to_be_visible()
    link = main.get_by_role("textbox", name="or load one from a link")
    link.fill("http://127.0.0.1:9/x.csv")
    main.get_by_role("button", name="Load", exact=True).click()
    wait_for_app(page)
    error = main.get_by_test_id("stAlertContentError")
    expect(error.first).to_contain_text("Could not load prices from http://127.0.0.1:9/x.csv")
    expect(error.first).to_contain_text("The uploaded file team-prices.csv is still used, with its 1 offers.")
    expect(page.get_by_text("Using 1 offers from team-prices.csv")).to_be_visible()
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
