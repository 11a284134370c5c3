"""The HTML report opened from disk in Chromium, every request that is not the file itself blocked and recorded:
none is made, the live link is absolute, every chart's tick labels are readable (inside the chart, clear of
their neighbours, of the axis titles and of the legend), and the ten cheapest chart has one bar per offer with
its own label, the cheapest at the top. Screenshots: test-output/screenshots/report-*.png.

One report is downloaded from the app (the issue's 64 x H100 pre-training link, from the Overview's button: the
link in it is the one the app writes); two more are built by the same function the download runs, to cover serving at
small and at large numbers (a $30,000,000 axis) without two more page loads."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest

from .conftest import OUT, open_app

pytestmark = pytest.mark.browser

TRAINING = "gpu=H100+SXM&gpus=64&src=Model+size+only&tokens_b=1000&workload=Pre-training&mfu=0.5"
BUILT = {"serving": "", "large": "model=Llama-3.1-405B&rpd=2000000"}
WIDTH_PX = 1040  # gpuplan_ui.report.WIDTH_PX

CHARTS = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).map(el => {
  const box = (n) => { const r = n.getBoundingClientRect();
                       return {text: n.textContent, l: r.left, r: r.right, t: r.top, b: r.bottom}; };
  const axes = {};
  const axis = (name) => (axes[name] = axes[name] || {ticks: [], title: null});
  el.querySelectorAll('g[class$="tick"] > text').forEach(t =>
    axis(t.parentNode.getAttribute('class').replace(/tick$/, '')).ticks.push(box(t)));
  el.querySelectorAll('text[class$="title"]:not(.gtitle)').forEach(t =>
    axis(t.getAttribute('class').replace(/title$/, '')).title = box(t));
  const title = el.querySelector('.gtitle'), legend = el.querySelector('.legend');
  const bars = el.data[0] && el.data[0].type === 'bar' && el.data[0].orientation === 'h' ? {
    y: Array.from(el.data[0].y), x: Array.from(el.data[0].x),
    drawn: el.querySelectorAll('.barlayer .trace:first-child .point').length} : null;
  return {fig: box(el.querySelector('.main-svg')), axes, title: title && box(title),
          legend: legend && box(legend), bars};
})"""


def _overlap(a: dict, b: dict) -> bool:
    return min(a["r"], b["r"]) - max(a["l"], b["l"]) > 0.5 and min(a["b"], b["b"]) - max(a["t"], b["t"]) > 0.5


def _inside(a: dict, f: dict) -> bool:
    return a["l"] >= f["l"] - 1 and a["r"] <= f["r"] + 1 and a["t"] >= f["t"] - 1 and a["b"] <= f["b"] + 1


def _drawn(boxes: list[dict]) -> list[dict]:
    return [b for b in boxes if b["r"] - b["l"] > 0 and b["text"]]


@pytest.fixture(scope="module")
def reports(browser, app_url, tmp_path_factory) -> dict[str, tuple[Path, str]]:
    """name -> (the saved file, the app's address it was made from)."""
    from gpuplan_core import RECORDS, read_link, to_scenario
    from gpuplan_ui.share import report_html

    out = tmp_path_factory.mktemp("reports")
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    pg = ctx.new_page()
    open_app(pg, f"{app_url}/?{TRAINING}")
    with pg.expect_download() as dl:
        pg.get_by_role("button", name="Download report (HTML)").click()
    files = {"training": (out / "training.html", app_url)}
    dl.value.save_as(files["training"][0])
    ctx.close()
    for name, query in BUILT.items():
        values = {inp.key: inp.default for inp in RECORDS} | read_link(dict(parse_qsl(query)))[0]
        sc = to_scenario(values)[0]
        path = out / f"{name}.html"
        path.write_text(report_html(sc, values, "bundled", False, f"{app_url}/?{query}"))
        files[name] = (path, app_url)
    return files


def _refuser(asked: list[str]):
    def refuse(route) -> None:  # one parameter: Playwright passes (route, request) to a handler that takes two
        asked.append(route.request.url)
        route.abort()

    return refuse


def _recorder(asked: list[str]):
    def record(request) -> None:  # every request the page makes, whether a route saw it or not
        if not request.url.startswith(("file:", "data:")):
            asked.append(request.url)

    return record


@pytest.fixture(scope="module")
def opened(browser, reports) -> dict[str, dict]:
    """Each report opened from disk once, every request that is not the file itself refused and recorded: what
    it asked for, its live link and its charts' boxes (and a full-page screenshot)."""
    seen = {}
    for name, (path, app_url) in reports.items():
        ctx = browser.new_context(viewport={"width": 1280, "height": 900})
        asked: list[str] = []
        ctx.route(lambda url: not url.startswith("file:"), _refuser(asked))
        pg = ctx.new_page()
        pg.on("request", _recorder(asked))
        pg.goto(path.as_uri())
        pg.wait_for_function("document.querySelectorAll('.js-plotly-plot .main-svg').length > 0")
        pg.wait_for_timeout(300)
        charts = pg.evaluate(CHARTS)
        OUT.mkdir(parents=True, exist_ok=True)
        pg.screenshot(path=str(OUT / f"report-{name}.png"), full_page=True)
        scenario = pg.locator("h2:text-is('Scenario') + ul > li").all_inner_texts()
        seen[name] = {
            "asked": asked,
            "live": pg.locator("a").first.get_attribute("href"),
            "charts": charts,
            "app_url": app_url,
            "scenario": scenario,
        }
        ctx.close()
    return seen


@pytest.mark.parametrize("name", ["training", *BUILT])
def test_the_report_from_disk_fetches_nothing_and_links_back_absolutely(opened, name):
    r = opened[name]
    assert r["asked"] == []  # no font, script, image, MathJax or map tile: nothing leaves the file
    live = r["live"]  # absolute: a relative one becomes file:///?... from disk
    assert urlsplit(live).scheme == "http" and live.startswith(r["app_url"] + "/?"), live
    if name == "training":
        assert dict(parse_qsl(urlsplit(live).query)) == dict(parse_qsl(TRAINING)), live  # the scenario's link


def test_the_reports_scenario_names_each_input_once_as_the_app_shows_it(opened):
    """The issue's link as its inputs read in the app: the job as the Job box names it (not "pretrain"), the model
    once (not again as "Model: Model size only")."""
    assert opened["training"]["scenario"] == [
        "Model: 7B dense (derived)",
        "Job: Pre-training",
        "GPU: H100 SXM",
        "GPUs: 64",
        "Training tokens (billions): 1,000",
        "MFU (0 = predicted): 0.5",
    ]
    assert opened["large"]["scenario"] == [
        "Model: Llama-3.1-405B",
        "Job: Interactive inference (chat, APIs)",
        "Requests per day: 2,000,000",
    ]


@pytest.mark.parametrize("name", ["training", *BUILT])
def test_every_chart_in_the_report_has_readable_ticks(opened, name):
    """At the report's width: each tick label inside its chart (not "00" for "$30,000"), clear of its neighbours,
    of every axis title and of the legend; the axis titles and the chart's title inside the chart."""
    charts = opened[name]["charts"]
    assert len(charts) >= 3, name
    for n, c in enumerate(charts):
        fig, where = c["fig"], (name, n, (c["title"] or {}).get("text", "")[:50])
        assert round(fig["r"] - fig["l"]) == WIDTH_PX and fig["r"] <= 1280, where  # the report's width, in view
        assert c["title"] and _inside(c["title"], fig), where
        titles = [t for x in c["axes"].values() if (t := x["title"]) and t["text"]]
        for title in titles:
            assert _inside(title, fig), (where, title["text"])
        for ax, a in c["axes"].items():
            ticks = _drawn(a["ticks"])
            assert len(ticks) >= 2 or not a["ticks"], (where, ax)  # an axis with labels shows at least two
            side = "l" if ax.startswith("x") else "t"
            ordered = sorted(ticks, key=lambda t: t[side])
            for a_, b_ in zip(ordered, ordered[1:], strict=False):
                assert not _overlap(a_, b_), (where, ax, a_["text"], b_["text"])
            for t in ticks:
                assert _inside(t, fig), (where, ax, t["text"])
                for title in titles:
                    assert not _overlap(t, title), (where, ax, t["text"], title["text"])
                assert not (c["legend"] and _overlap(t, c["legend"])), (where, ax, t["text"], "legend")
        for title in titles:
            assert not (c["legend"] and _overlap(title, c["legend"])), (where, title["text"], "legend")


@pytest.mark.parametrize("name", ["training", *BUILT])
def test_the_reports_ten_cheapest_has_one_bar_per_offer_cheapest_on_top(opened, name):
    """The issue's link merged two offers with one label into a ~$105k bar labelled "$"; the report draws the
    app's builder: one bar per offer, each label shown once, sorted, the cheapest at the top."""
    cheapest = [c for c in opened[name]["charts"] if c["title"]["text"].startswith(("Cheapest", "None of these"))]
    assert len(cheapest) == 1, name
    c = cheapest[0]
    bars = c["bars"]
    assert len(set(bars["y"])) == len(bars["y"]) == bars["drawn"] <= 10, name  # one drawn bar per offer
    assert len(bars["y"]) >= 3, name
    assert bars["x"] == sorted(bars["x"], reverse=True), name  # plotly draws the last at the top
    labels = sorted(_drawn(c["axes"]["y"]["ticks"]), key=lambda t: t["t"])
    assert [t["text"] for t in labels] == bars["y"][::-1], name  # every label drawn, whole, cheapest first
