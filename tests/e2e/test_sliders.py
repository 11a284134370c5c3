"""The sliders in a real browser (the app as served, page reruns on): a link's value between round stops is kept; a
drag of the input-tokens slider through many stops sends one value, the one it stops on (Streamlit's slider sends on
release, not while it moves), and the number box and the link follow. The Overview's five cheapest at 1280 px:
test_projector.py."""

from __future__ import annotations

import time
from urllib.parse import parse_qsl, urlsplit

import pytest
from playwright.sync_api import expect

from gpuplan_core import INPUTS
from tests.e2e.conftest import open_app, wait_for_app

pytestmark = pytest.mark.browser
BOX, THUMB = "Input tokens per request", "Input tokens per request: on a scale"


def _in(pg) -> str | None:
    return dict(parse_qsl(urlsplit(pg.url).query)).get("in")


def _until(pg, want: str, timeout_s: float = 15) -> str | None:
    end = time.time() + timeout_s
    while _in(pg) != want and time.time() < end:
        pg.wait_for_timeout(100)
    return _in(pg)


def test_a_slider_drag_sends_the_value_it_stops_on_and_the_box_and_the_link_follow(browser, app_url):
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = ctx.new_page()
    sent: list[float] = []
    pg.on("websocket", lambda ws: ws.on("framesent", lambda _: sent.append(time.time())))
    open_app(pg, app_url + "/?in=3000")
    side = pg.get_by_test_id("stSidebar")
    box, thumb = side.get_by_role("spinbutton", name=BOX), side.get_by_role("slider", name=THUMB)
    assert box.input_value() == "3000" and thumb.get_attribute("aria-valuetext") == "3k"  # the link's value kept

    thumb.scroll_into_view_if_needed()
    slider = side.get_by_test_id("stSlider").filter(has=pg.get_by_role("slider", name=THUMB))
    shown, track = slider.get_by_test_id("stSliderThumbValue").bounding_box(), thumb.bounding_box()
    x, y = shown["x"] + shown["width"] / 2, track["y"] + track["height"] / 2  # the thumb, under its value
    pg.mouse.move(x, y)
    pg.mouse.down()
    before = len(sent)
    for step in range(1, 9):  # a few stops to the right (about 7 px each), in eight moves
        pg.mouse.move(x + 3 * step, y)
        pg.wait_for_timeout(60)
    during = len(sent) - before
    pg.mouse.up()
    label = thumb.get_attribute("aria-valuetext")
    want = next(v for v in INPUTS["in"].slider_stops(3000.0) if INPUTS["in"].label_of(v) == label)
    assert want > 3000 and during == 0  # nothing was sent while it moved
    wait_for_app(pg, 180_000)  # a new question: its answer may take a while on a busy machine
    assert _until(pg, f"{want:.0f}") == f"{want:.0f}"  # the value it stopped on, and no other
    assert box.input_value() == f"{want:.0f}"
    ctx.close()


def test_arrow_keys_on_a_stepped_slider_send_each_stop_and_the_box_and_the_link_follow(browser, app_url):
    """An arrow key on the input-tokens slider sends at once (no need to leave the slider): from the link's 3,500
    (between stops) one ArrowRight is the next stop up, 4,000; focus stays on the slider, so a second goes on to
    5,000; the box and the link follow each."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = ctx.new_page()
    open_app(pg, app_url + "/?in=3500")
    side = pg.get_by_test_id("stSidebar")
    box, thumb = side.get_by_role("spinbutton", name=BOX), side.get_by_role("slider", name=THUMB)
    stops = INPUTS["in"].slider_stops(3500.0)
    assert 3500.0 not in INPUTS["in"].slider_stops(4000.0)  # the link's value is a stop only while it is the value
    assert stops[stops.index(3500.0) + 1 :][:2] == [4000.0, 5000.0]
    thumb.focus()
    for want in ("4000", "5000"):
        pg.keyboard.press("ArrowRight")
        wait_for_app(pg, 180_000)
        assert _until(pg, want, 60) == want
        expect(box).to_have_value(want, timeout=60_000)  # the box is redrawn by the rerun after the link moves
        assert box.input_value() == want and thumb.get_attribute("aria-valuetext") == f"{int(want) // 1000}k"
        assert pg.evaluate("document.activeElement.getAttribute('aria-label')") == THUMB  # still on the slider
    ctx.close()
