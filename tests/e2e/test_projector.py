"""On a projector, in a real browser: every page at 1280x720, 1440x900 and 1920x1080, light and dark, with one
page load per page and theme (the page follows the window's size as it widens), checking

- the first table drawn: its first five columns are wide enough for their header and every cell, and in view;
- every chart drawn: no title, tick, axis title, legend entry, annotation or bar text outside the chart, none
  across a reference line, none on top of another;
- at 1280 px, the column the page's first table is read for in view (the Overview's cost, Cost's monthly or
  per-run cost), and the Overview's five cheapest whole in their column, the offer first;
- the Cost page's "ten cheapest" chart: one bar per offer with distinct labels, sorted by the value shown, the
  cheapest on top and highlighted.

Each page at 1280 px in both themes is saved whole under test-output/screenshots/ to look at.
"""

from __future__ import annotations

import pytest

from .conftest import OUT, open_app

PAGES = {
    "": "Overview",
    "Memory": "Memory",
    "Performance": "Performance",
    "Cost": "Cost",
    "Cost?gpu=H100+SXM&gpus=64&src=Model+size+only&tokens_b=1000&workload=Pre-training&mfu=0.5": "Cost-training",
    "Compare?b_gpu=H200": "Compare",
    "Data": "Data",
    "Methodology": "Methodology",
}
SIZES = [(1280, 720), (1440, 900), (1920, 1080)]
THEMES = ["light", "dark"]

# The glide data grid draws on a canvas; its React props hold the columns as drawn (with their widths), the cells
# and the theme's fonts, so each header's and cell's needed width is measured in the grid's own font.
GRID = """(df) => {
  const canvas = df.querySelector('canvas');
  if (!canvas || df.getBoundingClientRect().width < 1) return null;
  const key = Object.keys(canvas).find(k => k.startsWith('__reactFiber'));
  let f = canvas[key], props = null;
  for (; f; f = f.return) {
    const p = f.memoizedProps;
    if (p && Array.isArray(p.columns) && p.getCellContent && p.theme && typeof p.rows === 'number') { props = p; break; }
  }
  if (!props) return null;
  const t = props.theme, ctx = document.createElement('canvas').getContext('2d');
  const px = (text, font) => { ctx.font = `${font} ${t.fontFamily}`; return ctx.measureText(text).width; };
  const pad = 2 * t.cellHorizontalPadding;
  return {visible: df.getBoundingClientRect().width, columns: props.columns.slice(0, 5).map((c, i) => {
    let cell = 0, widest = '';
    for (let r = 0; r < props.rows; r++) {
      const cc = props.getCellContent([i, r]);
      const text = String(cc.displayData ?? cc.data ?? '');
      const w = px(text, t.baseFontStyle) + pad;
      if (w > cell) { cell = w; widest = text; }
    }
    return {title: c.title, width: c.width, header: px(c.title, t.headerFontStyle) + pad, cell, widest};
  })};
}"""

CHARTS = """(root) => Array.from(root.querySelectorAll('.js-plotly-plot')).map(el => {
  const box = el.getBoundingClientRect();
  if (box.width < 1 || box.height < 1) return null;  // not drawn (a collapsed section)
  const fl = el._fullLayout || {};
  const rect = e => { const b = e.getBoundingClientRect(); return {left: b.left, right: b.right, top: b.top, bottom: b.bottom}; };
  const labels = [];
  const add = (sel, kind) => el.querySelectorAll(sel).forEach(t => {
    const b = rect(t);
    if (b.right - b.left >= 1 && (t.textContent || '').trim()) labels.push({kind, text: t.textContent, ...b});
  });
  add('.gtitle', 'title'); add('.xtitle, .ytitle, .y2title', 'axis title');
  add('.xtick text, .ytick text, .y2tick text', 'tick'); add('.annotation-text', 'annotation');
  add('.textpoint text', 'bar or point text'); add('.legendtext', 'legend entry');
  const lines = [];
  el.querySelectorAll('.shapelayer path[data-index]').forEach(p => {
    const s = (fl.shapes || [])[+p.getAttribute('data-index')];
    if (s && s.type === 'line') lines.push(rect(p));
  });
  const categories = (el.data || []).flatMap(tr => tr.orientation === 'h' ? (tr.y || []) : []).map(String);
  const yticks = Array.from(el.querySelectorAll('.ytick text')).map(t => t.textContent);
  return {title: (fl.title && fl.title.text || '').replace(/<br>/g, ' ').replace(/<[^>]+>/g, ''), left: box.left, right: box.right,
          top: box.top, bottom: box.bottom, labels, lines, categories, yticks};
}).filter(Boolean)"""

# The "ten cheapest" chart: its bars as data and as drawn (top to bottom).
CHEAPEST = """(root) => {
  const el = Array.from(root.querySelectorAll('.js-plotly-plot'))
    .find(e => /^(Cheapest|None of these)/.test((e._fullLayout.title.text || '').replace(/<[^>]+>/g, '')));
  if (!el) return null;
  const tr = el.data[0];
  const bars = Array.from(el.querySelectorAll('.barlayer .point path')).map(p => {
    const b = p.getBoundingClientRect(); return {top: b.top, width: b.width};
  }).sort((a, b) => a.top - b.top);
  const ticks = Array.from(el.querySelectorAll('.ytick')).map(t => ({text: t.textContent,
    top: t.getBoundingClientRect().top, bold: !!t.querySelector('[style*="bold"], b, tspan[style*="bold"]')}))
    .sort((a, b) => a.top - b.top).map(t => t);
  return {y: tr.y.map(String), x: tr.x, line: (tr.marker.line || {}).width, bars, ticks};
}"""

SETTLED = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).every(el => {
  const w = el.getBoundingClientRect().width;
  return w < 1 || !el._fullLayout || Math.abs(el._fullLayout.width - w) <= 2;
})"""

DARK = "() => { const m = getComputedStyle(document.querySelector('[data-testid=stApp]')).backgroundColor.match(/\\d+/g); return m.slice(0, 3).reduce((a, b) => a + +b, 0) < 200; }"


def _overlap(a: dict, b: dict, tol: float = 1) -> bool:
    return min(a["right"], b["right"]) - max(a["left"], b["left"]) > tol and (
        min(a["bottom"], b["bottom"]) - max(a["top"], b["top"]) > tol
    )


def _crosses(t: dict, line: dict) -> bool:
    """A reference line runs through a label's box (touching its edge is not through)."""
    if line["right"] - line["left"] < 4:  # vertical
        x = (line["left"] + line["right"]) / 2
        return t["left"] + 1 < x < t["right"] - 1 and t["bottom"] > line["top"] and t["top"] < line["bottom"]
    y = (line["top"] + line["bottom"]) / 2
    return t["top"] + 1 < y < t["bottom"] - 1 and t["right"] > line["left"] and t["left"] < line["right"]


def chart_problems(charts: list[dict]) -> list[str]:
    out = []
    for c in charts:
        name = c["title"][:50]
        for t in c["labels"]:
            if (
                t["left"] < c["left"] - 1
                or t["right"] > c["right"] + 1
                or t["top"] < c["top"] - 1
                or (t["bottom"] > c["bottom"] + 1)
            ):
                out.append(f"[{name}] {t['kind']} outside the chart: {t['text']!r}")
            out += [f"[{name}] {t['kind']} on a reference line: {t['text']!r}" for ln in c["lines"] if _crosses(t, ln)]
        for i, a in enumerate(c["labels"]):
            out += [
                f"[{name}] {a['kind']} {a['text']!r} on {b['kind']} {b['text']!r}"
                for b in c["labels"][i + 1 :]
                if _overlap(a, b)
            ]
        for label in (t for t in c["yticks"] if t and not t[0].isdigit() and not t.startswith("$")):
            if c["categories"] and label not in c["categories"]:  # a category label is shown whole
                out.append(f"[{name}] category label cut: {label!r}")
    return out


def table_problems(grid: dict | None) -> list[str]:
    if grid is None:
        return []
    out, x = [], 0.0
    for c in grid["columns"]:
        need = max(c["header"], c["cell"])
        if need > c["width"] + 1:
            out.append(f"column {c['title']!r} is {c['width']} px, its text needs {need:.0f} ({c['widest']!r})")
        x += c["width"]
        if x > grid["visible"] + 1:
            out.append(f"column {c['title']!r} ends at {x:.0f} px, past the table's {grid['visible']:.0f} px view")
    return out


def cheapest_problems(ch: dict | None) -> list[str]:
    if ch is None:
        return ["no 'ten cheapest' chart"]
    out = []
    n = len(ch["y"])
    if len(set(ch["y"])) != n:
        out.append(f"labels shared by several offers (their bars stack): {ch['y']}")
    if len(ch["bars"]) != n:
        out.append(f"{len(ch['bars'])} bars drawn for {n} offers")
    top_down = ch["x"][::-1]  # plotly draws the first bar at the bottom
    if top_down != sorted(top_down):
        out.append(f"not sorted by the value shown, cheapest first: {top_down}")
    widths = [b["width"] for b in ch["bars"]]
    if any(b < a - 1 for a, b in zip(widths, widths[1:], strict=False)):
        out.append(f"drawn bars do not grow from the top down: {widths}")
    ticks = [t["text"] for t in ch["ticks"]]
    if ticks != ch["y"][::-1]:
        out.append(f"the labels drawn top to bottom are not the offers cheapest first: {ticks}")
    if not ch["line"] or ch["line"][-1] <= 0 or any(w > 0 for w in ch["line"][:-1]):
        out.append(f"the cheapest bar alone is not highlighted (outline widths {ch['line']})")
    if ch["ticks"] and not ch["ticks"][0]["bold"]:
        out.append("the cheapest offer's label is not bold")
    return out


# The column a page's first table is read for, in view at 1280 px without scrolling (its visible headers: the grid's
# accessible table holds only the columns it draws).
DECIDING = {"Overview": "cost (USD)", "Cost": "monthly (USD)", "Cost-training": "per-run (USD)"}
SCROLL = "df => { const s = df.querySelector('.dvn-scroller'); return [s.scrollWidth, s.clientWidth]; }"


def at_1280_problems(pg, grid, name: str) -> list[str]:
    """The deciding column in view; the Overview's five cheapest whole in their column, the offer first."""
    out = []
    grid.scroll_into_view_if_needed()
    pg.wait_for_timeout(500)  # the grid draws the columns in its visible width once it is on screen
    shown = grid.locator("[role=columnheader]").evaluate_all("hs => hs.map(h => h.textContent)")
    if name in DECIDING and DECIDING[name] not in shown:
        out.append(f"the deciding column {DECIDING[name]!r} is not in view: {shown}")
    if name == "Overview":
        scroll, column = grid.evaluate(SCROLL), pg.get_by_test_id("stMainBlockContainer").bounding_box()
        if scroll[0] > scroll[1]:
            out.append(f"the five cheapest scroll sideways ({scroll[0]} px in {scroll[1]} px)")
        box = grid.bounding_box()
        if box["x"] + box["width"] > column["x"] + column["width"] + 1:
            out.append("the five cheapest run past the page's column")
        if (first := grid.locator("th").first.inner_text()) != "offer":
            out.append(f"the five cheapest's first column is {first!r}, not the offer")
    return out


@pytest.fixture(scope="module")
def projector(browser):
    ctx = browser.new_context(viewport={"width": SIZES[0][0], "height": SIZES[0][1]}, color_scheme="light")
    pg = ctx.new_page()
    yield pg
    ctx.close()


def _whole_page_screenshot(pg, path) -> None:
    """The page whole: the window made as tall as the app's scrolling main area, then put back."""
    w, h = pg.viewport_size["width"], pg.viewport_size["height"]
    tall = pg.evaluate("() => document.querySelector('[data-testid=stMain]').scrollHeight")
    pg.set_viewport_size({"width": w, "height": min(max(tall, h), 8000)})
    pg.wait_for_function(SETTLED, timeout=10_000)
    pg.wait_for_timeout(300)
    pg.screenshot(path=str(path))
    pg.set_viewport_size({"width": w, "height": h})


@pytest.mark.parametrize("path", list(PAGES), ids=list(PAGES.values()))
def test_every_page_reads_whole_on_a_projector(projector, app_url, path):
    """One load per page; at each size and theme its first table's first five columns and every chart read whole
    (see the module's docstring); the Cost pages' cheapest chart is checked too."""
    pg, name = projector, PAGES[path]
    main = pg.locator("[data-testid='stMain']")
    problems = []
    for theme in THEMES:
        # loaded at the narrowest size, then widened: a grid stretched to a wide window keeps its widths when the
        # window narrows again, which no fresh page shows
        pg.set_viewport_size({"width": SIZES[0][0], "height": SIZES[0][1]})
        pg.emulate_media(color_scheme=theme)
        open_app(pg, f"{app_url}/{path}")
        pg.wait_for_function(DARK if theme == "dark" else f"() => !({DARK})()", timeout=10_000)
        for w, h in SIZES:
            pg.set_viewport_size({"width": w, "height": h})
            pg.wait_for_function(SETTLED, timeout=10_000)
            pg.wait_for_timeout(150)
            where = f"{name} {w}x{h} {theme}"
            grids = [g for g in pg.get_by_test_id("stDataFrame").all() if g.is_visible()]
            if grids:
                problems += [f"{where}: first table: {p}" for p in table_problems(grids[0].evaluate(GRID))]
                if w == 1280:
                    problems += [f"{where}: {p}" for p in at_1280_problems(pg, grids[0], name)]
            problems += [f"{where}: {p}" for p in chart_problems(pg.evaluate(CHARTS, main.element_handle()))]
            if name.startswith("Cost"):
                cheapest = pg.evaluate(CHEAPEST, main.element_handle())
                problems += [f"{where}: ten cheapest: {p}" for p in cheapest_problems(cheapest)]
            if w == 1280:
                OUT.mkdir(parents=True, exist_ok=True)
                _whole_page_screenshot(pg, OUT / f"{name}-1280x720-{theme}.png")
    pg.emulate_media(color_scheme="light")
    pg.set_viewport_size({"width": SIZES[0][0], "height": SIZES[0][1]})
    assert not problems, "\n".join(problems)
