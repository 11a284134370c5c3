"""In a real browser: the meeting view from a link, the report opened offline, your price in a cold link. Every
page at three sizes in both themes, its screenshots, tables (the deciding column in view at 1280 px) and charts:
test_projector.py."""

import re
from pathlib import Path

from playwright.sync_api import expect

from .conftest import OUT, open_app


def _answer(pg) -> str:
    return pg.get_by_test_id("stAlertContentSuccess").or_(pg.get_by_test_id("stAlertContentInfo")).first.inner_text()


def test_meeting_view_from_a_link_hides_the_sidebar(browser, app_url):
    ctx = browser.new_context(viewport={"width": 1280, "height": 720})
    pg = ctx.new_page()
    open_app(pg, f"{app_url}/Memory?meeting=true")
    expect(pg.get_by_test_id("stSidebar")).to_be_hidden()
    expect(pg.get_by_test_id("stAlertContentSuccess").first).to_be_visible()
    expect(pg.get_by_test_id("stDataFrame")).to_have_count(0)
    pg.get_by_role("button", name="Leave meeting view").click()
    expect(pg.get_by_test_id("stSidebar")).to_be_visible()
    expect(pg).not_to_have_url("meeting=true")
    ctx.close()


def test_meeting_view_moves_through_every_page_and_back_keeping_the_scenario(browser, app_url):
    """Presenting: Next through every page and Previous back to the first, from the meeting view's own links; the
    address keeps the scenario and the meeting view at every step, the sidebar stays hidden."""
    from .conftest import wait_for_app

    titles = ["Which GPU should we rent", "Memory", "Performance", "Cost", "Compare A vs B", "Data", "Methodology"]
    ctx = browser.new_context(viewport={"width": 1280, "height": 720})
    pg = ctx.new_page()
    open_app(pg, f"{app_url}/?meeting=true&rpd=50000")

    def at(i: int) -> None:
        expect(pg.get_by_role("heading", level=1)).to_contain_text(titles[i])
        assert "meeting=true" in pg.url and "rpd=50000" in pg.url, pg.url
        expect(pg.get_by_test_id("stSidebar")).to_be_hidden()

    at(0)
    for i in range(1, len(titles)):
        pg.get_by_role("link", name=re.compile(r"^Next: ")).click()
        wait_for_app(pg)
        at(i)
    expect(pg.get_by_role("link", name=re.compile(r"^Next: "))).to_have_count(0)  # the last page
    for i in range(len(titles) - 2, -1, -1):
        pg.get_by_role("link", name=re.compile(r"^Previous: ")).click()
        wait_for_app(pg)
        at(i)
    pg.get_by_role("button", name="All pages").click()
    pg.get_by_role("link", name="Cost").click()
    wait_for_app(pg)
    at(3)
    ctx.close()


def test_the_report_opens_offline_with_the_pages_answer(browser, app_url, tmp_path):
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    pg = ctx.new_page()
    open_app(pg, f"{app_url}/?rpd=50000")
    answer = _answer(pg)
    numbers = [m.inner_text() for m in pg.get_by_test_id("stMetricValue").all()[:4]]
    with pg.expect_download() as dl:
        pg.get_by_role("button", name="Download report (HTML)").click()
    path = tmp_path / "report.html"
    dl.value.save_as(path)
    ctx.close()
    offline = browser.new_context(offline=True, viewport={"width": 1280, "height": 900})
    rp = offline.new_page()
    rp.goto(path.as_uri())
    assert rp.locator(".answer").first.inner_text() == answer
    shown = [v.inner_text() for v in rp.locator(".numbers").first.locator(".value").all()]
    assert shown == numbers
    expect(rp.locator(".plotly-graph-div .main-svg").first).to_be_visible()
    # "Reopen it live" is the app's absolute address (a relative one would become file:///?... from disk)
    live = rp.get_by_role("link").first.get_attribute("href")
    assert live.startswith(app_url + "/") and "rpd=50000" in live, live
    rp.screenshot(path=str(Path(OUT) / "report-offline.png"), full_page=False)
    offline.close()


def test_your_price_survives_a_cold_link_and_changes_the_cost(browser, app_url):
    ctx = browser.new_context(viewport={"width": 1280, "height": 720})
    pg = ctx.new_page()
    open_app(pg, f"{app_url}/")
    before = _answer(pg)
    offer = pg.locator("[data-testid='stDataFrame'] [role=gridcell]").first.inner_text()
    open_app(pg, f"{app_url}/?myprice={offer}%3D0.05")
    after = _answer(pg)
    assert after != before and "at your price" in after
    pg.reload()
    pg.wait_for_timeout(500)
    open_app(pg, pg.url)
    assert _answer(pg) == after
    ctx.close()
