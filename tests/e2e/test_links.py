"""A link that never lies, in a real browser (Debian chromium): a scenario link survives every click, back,
forward and reload; a page reached by a click shows what the same page shows when opened cold from the link;
two visitors do not leak into each other; the share box's link reproduces the page."""

from __future__ import annotations

import contextlib
import re
from urllib.parse import parse_qsl, urlsplit

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect

from gpuplan_ui.frame import PAGES
from tests.e2e.conftest import open_app, wait_for_app

pytestmark = pytest.mark.browser

TITLES = [title for _, title, _ in PAGES]
PATHS = {title: ("" if n == 0 else f.removesuffix(".py")) for n, (f, title, _) in enumerate(PAGES)}

# Main inputs, an input in a closed advanced group, a fine-tuning method kept while serving, and three of the
# pages' own inputs (Compare's B side, Cost's projection, the overview's format toggle).
LINK = {
    "model": "Llama-3.1-70B",
    "in": "7936",
    "out": "256",
    "batch": "4",
    "weights": "FP8 (E4M3)",
    "gpu": "H200",
    "hours": "200",
    "method": "Full fine-tuning",
    "b_gpu": "L40S",
    "market": "Epoch AI (~47%/quarter)",
    "alt_formats": "true",
}


def query(url: str) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(url).query))


def settled_query(pg, want: dict[str, str], timeout_s: float = 10) -> dict[str, str]:
    """The address's values once they equal ``want`` (or after the timeout): Streamlit writes the values that
    code sets one message at a time, so an import reaches the address over several updates."""
    import time

    end = time.time() + timeout_s
    while query(pg.url) != want and time.time() < end:
        pg.wait_for_timeout(100)
    return query(pg.url)


def main_text(pg) -> str:
    """What the page says (charts' SVG text included), with the sidebar left out."""
    return pg.get_by_test_id("stMainBlockContainer").inner_text()


def click(pg, title: str) -> None:
    pg.get_by_test_id("stSidebar").get_by_role("link", name=title, exact=True).click()
    wait_for_app(pg)
    expect(pg.get_by_role("heading", level=1)).to_be_visible()


def choose(pg, name: str, option: str, where=None) -> None:
    """Pick an option of a selectbox (retrying the click once: a popover opened during a rerun may close)."""
    box = (where or pg).get_by_role("combobox", name=name, exact=True)
    opt = pg.get_by_role("option", name=option, exact=True)
    for _ in range(3):
        box.click()
        try:
            opt.wait_for(timeout=3000)
            break
        except Exception:  # noqa: BLE001 - retried
            pg.keyboard.press("Escape")
    opt.click()
    wait_for_app(pg)


def no_traceback(pg) -> None:
    assert "Traceback" not in pg.content()
    expect(pg.get_by_test_id("stException")).to_have_count(0)


def link_url(base: str, path: str, params: dict[str, str]) -> str:
    from urllib.parse import urlencode

    return f"{base}/{path}?{urlencode(params)}"


def test_every_page_reached_by_a_click_shows_what_its_cold_link_shows(browser, app_url):
    cold_ctx = browser.new_context(viewport={"width": 1600, "height": 1000})
    ctx = browser.new_context(viewport={"width": 1600, "height": 1000})
    try:
        pg = ctx.new_page()
        open_app(pg, link_url(app_url, "", LINK))
        assert query(pg.url) == LINK
        for title in TITLES[1:] + TITLES[:1]:
            click(pg, title)
            assert urlsplit(pg.url).path == "/" + PATHS[title], title
            assert query(pg.url) == LINK, title  # the address keeps every value after every click
            cold = cold_ctx.new_page()
            open_app(cold, link_url(app_url, PATHS[title], LINK))
            assert main_text(pg) == main_text(cold), title
            no_traceback(pg)
            cold.close()
    finally:
        ctx.close()
        cold_ctx.close()


def test_changes_persist_through_clicks_back_forward_and_reload(browser, app_url):
    ctx = browser.new_context(viewport={"width": 1600, "height": 1000})
    try:
        pg = ctx.new_page()
        open_app(pg, f"{app_url}/Cost?workload=Fine-tuning")
        sidebar = pg.get_by_test_id("stSidebar")
        # a number, then the method (the issue: picking Full after changing the micro-batch lost it)
        batch = sidebar.get_by_role("spinbutton", name="Micro-batch per GPU")
        batch.fill("2")
        batch.press("Enter")
        wait_for_app(pg)
        choose(pg, "Fine-tuning method", "Full fine-tuning", sidebar)
        # a select
        choose(pg, "Published model", "Qwen2.5-7B", sidebar)
        # a slider (failed runs and sweeps 0.30 -> 0.35; the MFU is a number now, 0 = predicted)
        thumb = sidebar.get_by_role("slider", name="Failed runs and sweeps")
        thumb.focus()
        thumb.press("ArrowRight")
        wait_for_app(pg)
        # an input in a closed advanced group: open it, set it, close it again
        sidebar.get_by_text("GPU count and parallelism", exact=True).click()
        wait_for_app(pg)
        gpus = sidebar.get_by_role("spinbutton", name="GPUs", exact=True)
        gpus.fill("8")
        gpus.press("Enter")
        wait_for_app(pg)
        sidebar.get_by_text("GPU count and parallelism", exact=True).click()
        wait_for_app(pg)
        want = {
            "workload": "Fine-tuning",
            "batch": "2",
            "method": "Full fine-tuning",
            "model": "Qwen2.5-7B",
            "overhead": "0.35",
            "gpus": "8",
        }
        assert query(pg.url) == want

        def check(where: str) -> None:
            assert query(pg.url) == want, where
            expect(sidebar.get_by_role("combobox", name="Fine-tuning method")).to_have_value("Full fine-tuning")
            expect(sidebar.get_by_role("combobox", name="Published model")).to_have_value("Qwen2.5-7B")
            expect(sidebar.get_by_role("spinbutton", name="Micro-batch per GPU")).to_have_value("2")
            expect(sidebar.get_by_role("slider", name="Failed runs and sweeps")).to_have_value("0.35")
            expect(
                pg.get_by_text(re.compile(r"Changed in closed groups: GPU count and parallelism: GPUs 8"))
            ).to_be_visible()
            no_traceback(pg)

        click(pg, "Memory")
        check("after a click")
        click(pg, "Performance")
        check("after a second click")
        pg.go_back()
        wait_for_app(pg)
        expect(pg.get_by_role("heading", level=1)).to_have_text("Memory")
        check("after back")
        pg.go_forward()
        wait_for_app(pg)
        expect(pg.get_by_role("heading", level=1)).to_have_text("Performance")
        check("after forward")
        pg.reload()
        wait_for_app(pg)
        check("after reload")
        # switching methods back and forth keeps the one picked
        for name in ("LoRA", "Full fine-tuning"):
            choose(pg, "Fine-tuning method", name, sidebar)
        check("after switching methods")
    finally:
        ctx.close()


def test_every_advanced_input_and_the_pricing_choice_survive_navigation(browser, app_url):
    advanced = {
        "gpus": "8",
        "tp": "4",
        "pp": "2",
        "rpd": "50000",
        "peak": "4",
        "ttft_ms": "1500",
        "tpot_ms": "60",
        "arrival": "In bursts (twice as uneven)",
        "lengths": "Each between (1 - spread) and 1 x the set lengths",
        "spread": "0.3",
        "max_seqs": "128",
        "max_tokens": "4096",
        "billing": "On-demand",
        "provider": "aws",
        "prices": "Yours only",
        "hours": "300",
        "busy": "0.7",
        "spot_restart": "0.2",
        "util": "0.85",
        "prefix": "0.3",
        "spec_b": "1",
        "spec_k": "5",
        "spec_accept": "0.6",
        "method": "QLoRA (4-bit base)",
    }
    ctx = browser.new_context(viewport={"width": 1600, "height": 1000})
    try:
        pg = ctx.new_page()
        open_app(pg, link_url(app_url, "Memory", advanced))
        assert query(pg.url) == advanced
        for title in TITLES:
            click(pg, title)
            assert query(pg.url) == advanced, title
        pg.go_back()
        wait_for_app(pg)
        assert query(pg.url) == advanced
        pg.reload()
        wait_for_app(pg)
        assert query(pg.url) == advanced
        no_traceback(pg)
    finally:
        ctx.close()


def test_a_link_written_by_hand_with_option_keys_keeps_its_values(browser, app_url):
    """A link typed with the options' keys (``arrival=bursty``, ``gpu=H100-SXM``) and numbers in another form
    (``in=8000.0``) opens with those values, written in the address as the app writes them (labels, whole
    numbers), and keeps them through clicks and a reload; a value that is not allowed is named, not kept."""
    typed = {
        "model": "Llama-3.1-70B",
        "gpu": "H100-SXM",
        "billing": "spot",
        "arrival": "bursty",
        "lengths": "chat",
        "in": "8000.0",
        "tp": "3",
    }
    want = {
        "model": "Llama-3.1-70B",
        "gpu": "H100 SXM",
        "billing": "Spot / interruptible",
        "arrival": "In bursts (twice as uneven)",
        "lengths": "Long-tailed, like chat traffic",
        "in": "8000",
    }
    ctx = browser.new_context(viewport={"width": 1600, "height": 1000})
    try:
        pg = ctx.new_page()
        open_app(pg, link_url(app_url, "Performance", typed))
        assert settled_query(pg, want) == want
        assert "tp='3' is not allowed" in pg.get_by_test_id("stMainBlockContainer").inner_text()
        for title in ("Cost", "Overview & recommendation"):
            click(pg, title)
            assert query(pg.url) == want, title
        pg.reload()
        wait_for_app(pg)
        assert query(pg.url) == want
        no_traceback(pg)
    finally:
        ctx.close()


def test_two_visitors_do_not_leak_into_each_other(browser, app_url):
    a_ctx = browser.new_context(viewport={"width": 1600, "height": 1000})
    b_ctx = browser.new_context(viewport={"width": 1600, "height": 1000})
    try:
        a, b = a_ctx.new_page(), b_ctx.new_page()
        open_app(a, f"{app_url}/Memory?model=Llama-3.1-70B")
        open_app(b, f"{app_url}/Memory?model=Qwen2.5-7B&gpu=L4")
        choose(a, "GPU", "H200", a.get_by_test_id("stSidebar"))
        click(b, "Cost")
        b.reload()
        wait_for_app(b)
        click(a, "Performance")
        assert query(a.url) == {"model": "Llama-3.1-70B", "gpu": "H200"}
        assert query(b.url) == {"model": "Qwen2.5-7B", "gpu": "L4"}
        expect(a.get_by_role("combobox", name="Published model")).to_have_value("Llama-3.1-70B")
        expect(b.get_by_role("combobox", name="Published model")).to_have_value("Qwen2.5-7B")
        expect(b.get_by_role("combobox", name="GPU", exact=True)).to_have_value("L4")
    finally:
        a_ctx.close()
        b_ctx.close()


def test_the_share_box_link_opens_the_same_page(browser, app_url):
    ctx = browser.new_context(viewport={"width": 1600, "height": 1000})
    ctx.grant_permissions(["clipboard-read", "clipboard-write"], origin=app_url)
    fresh = browser.new_context(viewport={"width": 1600, "height": 1000})
    try:
        pg = ctx.new_page()
        open_app(pg, f"{app_url}/?model=Llama-3.1-70B&b_gpu=L40S")
        click(pg, "Compare A vs B")
        choose(pg, "B: weights", "INT4 GPTQ/AWQ group 128")
        box = pg.get_by_test_id("stSidebar").get_by_role("spinbutton", name="Batch (concurrent sequences)")
        box.fill("16")
        box.press("Enter")
        wait_for_app(pg)
        pg.get_by_test_id("stSidebar").get_by_text("Share and save", exact=True).click()
        wait_for_app(pg)
        code = pg.get_by_test_id("stSidebar").get_by_test_id("stCode")
        shown = code.inner_text().strip()
        copied = ""
        for _ in range(3):  # a click that lands while the panel's rerun redraws it is lost: click again
            code.hover()
            code.get_by_role("button").first.click()  # the copy control (the page writes the clipboard asynchronously)
            with contextlib.suppress(PlaywrightTimeout):
                pg.wait_for_function("async () => (await navigator.clipboard.readText()).length > 0", timeout=5_000)
            if copied := pg.evaluate("navigator.clipboard.readText()"):
                break
            wait_for_app(pg)
        assert copied.strip() == shown
        assert urlsplit(copied).path == "/Compare"
        assert query(copied) == {
            "model": "Llama-3.1-70B",
            "b_gpu": "L40S",
            "b_weights": "INT4 GPTQ/AWQ group 128",
            "batch": "16",
        }
        other = fresh.new_page()
        open_app(other, copied.strip())
        pg.get_by_test_id("stSidebar").get_by_text("Share and save", exact=True).click()  # close: same sidebar
        wait_for_app(pg)
        assert main_text(other) == main_text(pg)
    finally:
        ctx.close()
        fresh.close()


def test_the_scenario_file_round_trips_every_input(browser, app_url, tmp_path):
    params = {**LINK, "workload": "Batch inference (offline jobs)", "util": "0.85", "b_batch": "32"}
    ctx = browser.new_context(viewport={"width": 1600, "height": 1000}, accept_downloads=True)
    try:
        pg = ctx.new_page()
        open_app(pg, link_url(app_url, "Cost", params))
        sidebar = pg.get_by_test_id("stSidebar")
        sidebar.get_by_text("Share and save", exact=True).click()
        wait_for_app(pg)
        saved = tmp_path / "scenario.json"
        for attempt in range(3):  # a click that lands while the panel's rerun redraws it is lost: click again
            try:
                with pg.expect_download(timeout=15_000) as dl:
                    sidebar.get_by_role("button", name="Download scenario (JSON)").click()
                break
            except PlaywrightTimeout:
                assert attempt < 2, "no download after three clicks"
                wait_for_app(pg)
        dl.value.save_as(saved)
        fresh = ctx.new_page()  # same browser, a new session on the default scenario
        open_app(fresh, f"{app_url}/Cost")
        assert query(fresh.url) == {}
        fresh.get_by_test_id("stSidebar").get_by_text("Share and save", exact=True).click()
        wait_for_app(fresh)
        fresh.get_by_test_id("stSidebar").get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(saved))
        wait_for_app(fresh)
        expect(fresh.get_by_text(re.compile(r"Scenario imported \(\d+ inputs\)"))).to_be_visible()
        assert settled_query(fresh, params) == params
        click(fresh, "Compare A vs B")
        assert query(fresh.url) == params
        expect(fresh.get_by_role("spinbutton", name="B: batch (0 = same as A)")).to_have_value("32")
        no_traceback(fresh)
    finally:
        ctx.close()
