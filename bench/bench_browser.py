"""Browser latency: slider change -> updated chart in headless Debian chromium, p50 and p95, and the ratio of each
app page to a bare one-slider one-chart page served the same way in the same run (the floor); and a cold open (a new
browser context on the running server: the link's first chart drawn, no placeholder left) against the floor's.
Goals (issue 30): the pages at p50 <= 2x and p95 <= 3x the floor; a cold open <= 1.25x. Prints figures; asserts
nothing.

Each page is served by the launcher (python -m gpuplan_ui.serve) and driven the same way (the first sidebar
slider, one arrow key, until the chart's SVG changes):
  1. floor: a one-slider page with a three-bar plotly chart (what Streamlit itself costs here);
  2. the same slider driving the app's memory chart (what that chart's redraw adds);
  3. the app's Overview, Memory, Performance and Cost pages with their whole sidebar.

    python bench/bench_browser.py [changes]
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from playwright.sync_api import sync_playwright  # noqa: E402

from bench.bench_load import start  # noqa: E402

CHART = "[data-testid='stPlotlyChart'] .main-svg"
IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"

FLOOR = """
import plotly.graph_objects as go
import streamlit as st
st.set_page_config(layout="wide")
with st.sidebar:
    ctx = st.select_slider("Context", options=[1024, 2048, 4096, 8192, 16384], value=4096, key="ctx")
st.title("floor")
st.plotly_chart(go.Figure(go.Bar(x=["a", "b", "c"], y=[1, ctx / 1000, 3]), layout={"template": "none"}), key="c")
"""
MEMORY_CHART_ONLY = f"""
import sys
sys.path.insert(0, {str(ROOT)!r})
import streamlit as st
from gpuplan_core import api
from gpuplan_ui import figures
st.set_page_config(layout="wide")
with st.sidebar:
    ctx = st.select_slider("Context", options=[1024, 2048, 4096, 8192, 16384], value=4096, key="ctx")
st.title("memory chart only")
report = api.memory_report({{"preset": "Llama-3.1-8B", "input_tokens": ctx - 256, "output_tokens": 256, "batch": 8}})
st.plotly_chart(figures.memory_figure(report), key="c")
"""


def launch(p):
    """Debian's headless chromium, as every browser bench here drives it."""
    return p.chromium.launch(
        executable_path="/usr/bin/chromium",
        headless=True,
        args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
    )


def measure(url: str, n: int, slider: str | None = None) -> list[float]:
    """``slider``: the sidebar slider's name to drive (the first one where None)."""
    with sync_playwright() as p:
        b = launch(p)
        pg = b.new_page(viewport={"width": 1600, "height": 1000})
        pg.goto(url)
        pg.wait_for_selector(IDLE, state="attached", timeout=180_000)
        pg.wait_for_selector(CHART, timeout=180_000)
        pg.wait_for_function(
            "() => document.querySelectorAll(\"[data-testid='stSkeleton']\").length === 0", timeout=60_000
        )
        side = pg.get_by_test_id("stSidebar")
        thumb = side.get_by_role("slider").first if slider is None else side.get_by_role("slider", name=slider)
        times = []
        for i in range(n + 3):
            pg.eval_on_selector(CHART, "e => { window.__old = e.innerHTML; }")
            thumb.focus(timeout=180_000)
            t = time.perf_counter()
            thumb.press("ArrowRight" if i % 2 == 0 else "ArrowLeft")  # one stop up, then back
            pg.wait_for_function(
                "sel => { const e = document.querySelector(sel); return e && e.innerHTML !== window.__old; }",
                arg=CHART,
                polling="raf",
                timeout=180_000,  # the first changes may ask new questions
            )
            times.append((time.perf_counter() - t) * 1e3)
            pg.wait_for_selector(IDLE, state="attached")
            pg.wait_for_timeout(100)
        b.close()
    return sorted(times[3:])  # the first changes warm the caches


def cold_open(url: str, n: int = 5) -> list[float]:
    """A link opened in a new browser context, ``n`` times: ms until its first chart is drawn with no placeholder
    (stSkeleton) left and the script idle; the first open (the server's caches) is left out."""
    times = []
    with sync_playwright() as p:
        b = launch(p)
        for _ in range(n + 1):
            ctx = b.new_context(viewport={"width": 1600, "height": 1000})
            pg = ctx.new_page()
            t = time.perf_counter()
            pg.goto(url)
            pg.wait_for_selector(CHART, timeout=120_000)
            pg.wait_for_function(
                "() => document.querySelectorAll(\"[data-testid='stSkeleton']\").length === 0", timeout=120_000
            )
            times.append((time.perf_counter() - t) * 1e3)
            ctx.close()
        b.close()
    return sorted(times[1:])


FLOOR_TIMES: list[float] = []
FLOOR_COLD: list[float] = []


def report_cold(name: str, times: list[float]) -> None:
    ratio = f"  = {statistics.median(times) / statistics.median(FLOOR_COLD):.2f}x the floor's" if FLOOR_COLD else ""
    print(f"{name:<52} {len(times)} opens: median {statistics.median(times):>5.0f} ms{ratio}", flush=True)


def _p95(times: list[float]) -> float:
    return times[int(0.95 * (len(times) - 1))]


def report(name: str, times: list[float]) -> None:
    ratio = ""
    if FLOOR_TIMES and times is not FLOOR_TIMES:
        ratio = (
            f"  = {statistics.median(times) / statistics.median(FLOOR_TIMES):.2f}x / "
            f"{_p95(times) / _p95(FLOOR_TIMES):.2f}x the floor"
        )
    print(
        f"{name:<52} {len(times)} changes: p50 {statistics.median(times):>4.0f} ms, "
        f"p95 {_p95(times):>4.0f} ms, max {times[-1]:>4.0f} ms{ratio}",
        flush=True,
    )


def run_script(name: str, source: str, n: int, floor: bool = False) -> None:
    with tempfile.TemporaryDirectory() as d:
        app = Path(d) / "app.py"
        app.write_text(source)
        proc, url = start([], ["-c", _LAUNCH, str(app)])
        try:
            times = measure(url, n)
            if floor:
                FLOOR_TIMES[:] = times
                times = FLOOR_TIMES
            report(name, times)
            if floor:
                FLOOR_COLD[:] = cold_open(url)
                report_cold("floor, opened cold", FLOOR_COLD)
        finally:
            proc.terminate()
            proc.wait(10)


# The launcher's fixes applied to another script (gpuplan_ui.serve runs app.py only).
_LAUNCH = (
    "import sys; from gpuplan_ui import serve; serve.patch_nodelay(); serve.limit_runs(1); "
    "from streamlit.web import cli; app = sys.argv.pop(1); "
    "sys.argv = ['streamlit', 'run', app, *sys.argv[1:]]; cli.main()"
)


PAGES = (  # (page, link, slider): Memory and Cost: pre-training, its sequence-length slider (4k <-> 8k); Overview
    # and Performance: serving with the model given by its size, its size slider (7B <-> 9B; the Overview's chart is
    # the cost-latency front, which pre-training does not draw). The first sidebar slider is the weights format:
    # BF16 -> FP16 changes no byte, so no chart.
    ("", "src=Model+size+only", "Model size (billions of parameters): on a scale"),
    ("Memory", "workload=Pre-training", "Sequence length (tokens)"),
    ("Performance", "src=Model+size+only", "Model size (billions of parameters): on a scale"),
    ("Cost", "workload=Pre-training", "Sequence length (tokens)"),
)


def main(n: int = 40) -> dict[str, tuple[float, float, float]]:
    """Print the figures (the module docstring); return each page's (change p50, change p95, cold open) as ratios
    to the floor's."""
    run_script("floor: one slider, a three-bar chart", FLOOR, n, floor=True)
    run_script("one slider, the app's memory chart", MEMORY_CHART_ONLY, n)
    ratios: dict[str, tuple[float, float, float]] = {}
    proc, url = start([])
    try:
        changes = {}
        for page, query, slider in PAGES:
            name = f"the app's {page or 'Overview'} page (whole sidebar)"
            changes[page] = measure(f"{url}/{page}?{query}", n, slider)
            report(name, changes[page])
        for page, query, _ in PAGES:
            cold = cold_open(f"{url}/{page}?{query}")
            report_cold(f"the app's {page or 'Overview'} page, opened cold", cold)
            ratios[page or "Overview"] = (
                statistics.median(changes[page]) / statistics.median(FLOOR_TIMES),
                _p95(changes[page]) / _p95(FLOOR_TIMES),
                statistics.median(cold) / statistics.median(FLOOR_COLD),
            )
    finally:
        proc.terminate()
        proc.wait(10)
    return ratios


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 40)
