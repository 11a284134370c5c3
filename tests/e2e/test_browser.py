"""The app in a real browser (Debian chromium): cold deep links, sliders, page switches, downloads,
uploads. A screenshot of every page is saved under test-output/screenshots/ for reviewers."""

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import open_app, screenshot, start_server, wait_for_app

pytestmark = pytest.mark.browser

PAGES = {
    "": "Which GPU should we rent",
    "Memory": "Memory",
    "Performance": "Performance",
    "Cost": "Cost",
    "Compare": "Compare A vs B",
    "Data": "Data & pricing upload",
    "Methodology": "Methodology",
}
DEEP = "model=Llama-3.1-70B&in=7936&out=256&batch=4&weights=FP8+%28E4M3%29"


def no_traceback(pg):
    body = pg.content()
    assert "Traceback" not in body
    expect(pg.get_by_test_id("stException")).to_have_count(0)


# A brand-new process for the entry page and for one page reached by path. Every page runs app.py first
# (st.navigation), so what a fresh process does differs by page only in the page's own imports; every page's cold
# link on a running server is held by test_links.py (each page opened cold from the link, compared with the page
# reached by clicks) and test_projector.py, which also saves each page's screenshot. Each fresh server costs ~25 s
# of the suite's two cores, so the other five pages are not started fresh (the suite must stay under 15 minutes).
FRESH = ("", "Memory")


@pytest.mark.parametrize("path,title", [(p, PAGES[p]) for p in FRESH])
def test_cold_deep_link_reproduces_scenario(browser, tmp_path, path, title):
    """A brand-new server whose first request is a deep link to this page."""
    proc, url = start_server(tmp_path / "server.log")
    try:
        ctx = browser.new_context(viewport={"width": 1600, "height": 1000})
        pg = ctx.new_page()
        open_app(pg, f"{url}/{path}?{DEEP}")
        expect(pg.get_by_role("heading", level=1)).to_contain_text(title)
        expect(pg.get_by_role("combobox", name="Published model")).to_have_value("Llama-3.1-70B")
        expect(pg.get_by_role("slider", name="Weights format")).to_have_attribute("aria-valuetext", "FP8 (E4M3)")
        no_traceback(pg)
        screenshot(pg, path or "Overview")
        ctx.close()
    finally:
        proc.terminate()
        proc.wait(10)


def test_slider_updates_chart_and_url(page, app_url):
    open_app(page, f"{app_url}/Memory?workload=Pre-training")
    before = page.get_by_test_id("stPlotlyChart").first.inner_html()
    thumb = page.get_by_test_id("stSidebar").get_by_role("slider", name="Sequence length (tokens)")
    thumb.focus()
    thumb.press("ArrowRight")  # sequence length 4k -> 8k
    wait_for_app(page)
    expect(page).to_have_url(re.compile(r"ctx=8k"))
    after = page.get_by_test_id("stPlotlyChart").first.inner_html()
    assert after != before


def test_input_tokens_update_the_numbers_and_url(page, app_url):
    open_app(page, f"{app_url}/Memory")
    box = page.get_by_test_id("stSidebar").get_by_role("spinbutton", name="Input tokens per request")
    box.fill("30000")
    box.press("Enter")
    wait_for_app(page)
    expect(page).to_have_url(re.compile(r"in=30000"))
    from gpuplan_core import api
    from gpuplan_ui.fmt import gb

    need = api.memory_report({"preset": "Llama-3.1-8B", "input_tokens": 30_000, "output_tokens": 300, "batch": 8})
    # the KV cache alone: 131,072 B/token x (30,000 + 300 tokens, in 16-token blocks) x batch 8
    assert need.components["KV cache"] == 131_072 * 30_304 * 8
    expect(page.get_by_text(f"needs {gb(need.per_gpu_bytes)} per GPU").first).to_be_visible()


def _main_text(pg) -> str:
    return pg.get_by_test_id("stMain").inner_text()


def test_a_page_only_rerun_shows_what_a_cold_link_shows(page, app_url):
    """A sidebar value change reruns only the page (the sidebar is not sent again): the page, an open section and
    the sidebar read as a cold link to the same values does, and a page switch keeps the value."""
    open_app(page, f"{app_url}/Memory?workload=Pre-training")
    page.get_by_text("Budget by component, and by scope").click()  # open: it follows every change from now on
    wait_for_app(page)
    box = page.get_by_test_id("stSidebar").get_by_role("spinbutton", name="Micro-batch per GPU")
    box.fill("3")
    box.press("Enter")
    wait_for_app(page)
    expect(page).to_have_url(re.compile(r"batch=3"))
    changed = _main_text(page)
    assert "Budget by component (per GPU)" in changed
    cold = page.context.new_page()
    open_app(cold, f"{app_url}/Memory?workload=Pre-training&batch=3")
    cold.get_by_text("Budget by component, and by scope").click()
    wait_for_app(cold)
    assert _main_text(cold) == changed
    cold.close()
    expect(box).to_have_value("3")  # the sidebar kept the value it was not sent again with
    page.get_by_test_id("stSidebar").get_by_role("link", name="Cost").click()
    wait_for_app(page)
    expect(page).to_have_url(re.compile(r"/Cost\?.*batch=3"))
    expect(page.get_by_test_id("stSidebar").get_by_role("spinbutton", name="Micro-batch per GPU")).to_have_value("3")


def test_memory_numbers_follow_the_link_and_the_csv_download_equals_the_table_shown(page, app_url):
    """The Memory page's figures are the link's, and the downloaded CSV is the dataframe the page rendered
    (compared through AppTest's view of it)."""
    from streamlit.testing.v1 import AppTest

    from gpuplan_ui.export import frame_to_csv

    open_app(page, f"{app_url}/Memory?{DEEP}")
    page.get_by_text("Budget by component, and by scope").click()  # the table is built when its section opens
    wait_for_app(page)
    # FP8 on the decoder's linear layers; embeddings + lm_head (2 x 128,256 x 8,192) and the norms in BF16:
    # (70,553,706,496 - kept) x 1 + kept x 2 bytes = 72.66 GB, split over the answer's 2 x H100 SXM (TP 2):
    # 36.33 GB per GPU, the "weights only" line (the budget is the answer's layout's)
    kept = 2 * 128_256 * 8192 + 8192 + 80 * 2 * 8192
    assert round(((70_553_706_496 - kept) + kept * 2) / 1e9, 2) == 72.66
    assert round(((70_553_706_496 - kept) + kept * 2) / 2 / 1e9, 2) == 36.33
    expect(page.get_by_text(re.compile(r"2 x H100 SXM \(TP 2\)")).first).to_be_visible()
    expect(page.get_by_text(re.compile(r"weights only.*36\.33 GB"))).to_be_visible()
    with page.expect_download() as dl:
        page.get_by_test_id("stDownloadButton").filter(has_text="Download CSV").first.locator("button").click()
    text = Path(dl.value.path()).read_text()
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=180)
    for k, v in (("model", "Llama-3.1-70B"), ("in", "7936"), ("out", "256"), ("batch", "4"), ("weights", "FP8 (E4M3)")):
        at.query_params[k] = v
    at.session_state["open_mem_parts"] = True
    at.switch_page("app_pages/Memory.py").run()
    shown = at.dataframe[0].value
    import io

    import pandas as pd

    full = pd.read_csv(io.StringIO(text))
    assert list(full.columns) == list(shown.columns) and len(full) == len(shown)  # the same rows and columns
    assert list(full["component"]) == list(shown["component"])
    # shown rounded to what matters; the CSV keeps every byte (and so every digit)
    from gpuplan_ui.tables import tidy

    assert (full["bytes"] == shown["bytes"]).all() and (full["GB (10^9 B)"].map(tidy) == shown["GB (10^9 B)"]).all()
    assert frame_to_csv(full) == text
    assert text.splitlines()[0] == "component,GB (10^9 B),GiB (2^30 B),bytes,basis,how"
    assert "KV cache" in text


def test_malformed_pricing_upload_shows_row_errors(page, app_url, tmp_path):
    bad = tmp_path / "prices.csv"
    seed = (Path(__file__).resolve().parents[2] / "data" / "pricing.csv").read_text().splitlines()
    bad.write_text("\n".join([seed[0], seed[1], seed[2].replace(",8,spot,", ",8,weekly,"), "x,y"]) + "\n")
    open_app(page, f"{app_url}/Data")
    page.get_by_test_id("stMainBlockContainer").get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(bad))
    wait_for_app(page)
    expect(page.get_by_text(re.compile(r"2 problems in prices\.csv; 1 of 3 rows are usable"))).to_be_visible()
    no_traceback(page)
    screenshot(page, "Data-upload-errors")


def test_an_edited_advanced_group_keeps_its_value_in_the_link_after_closing(page, app_url):
    """Advanced sidebar groups build their widgets only while open or holding a non-default value
    (sidebar._lazy_group). Closing one after an edit must not drop the edit from the link."""
    open_app(page, f"{app_url}/Cost")
    sidebar = page.get_by_test_id("stSidebar")
    hours = sidebar.get_by_role("spinbutton", name="Hours per month")
    expect(hours).to_have_count(0)  # closed at defaults: not built
    sidebar.get_by_text("Pricing", exact=True).click()
    wait_for_app(page)
    hours.fill("200")
    hours.press("Enter")
    wait_for_app(page)
    expect(page).to_have_url(re.compile(r"hours=200"))
    sidebar.get_by_text("Pricing", exact=True).click()  # close it again
    wait_for_app(page)
    expect(page).to_have_url(re.compile(r"hours=200"))
    expect(page.get_by_text("200 hours a month").first).to_be_visible()
    open_app(page, page.url)  # the link, opened fresh
    expect(page.get_by_text("200 hours a month").first).to_be_visible()
    no_traceback(page)
