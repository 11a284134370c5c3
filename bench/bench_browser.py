"""Browser latency: slider change -> updated chart in headless Debian chromium, p50 and p95, and the ratio of each
app page to a bare one-slider one-chart page served the same way in the same run (the floor).
Goal: the app's pages at p50 <= 1.6x and p95 <= 2x the floor. Prints figures; asserts nothing.

Three pages, each served by the launcher (python -m gpuplan_ui.serve) and driven the same way (the
first sidebar slider, one key press, until the chart's SVG changes):
  1. floor: a one-slider page with a three-bar plotly chart (what Streamlit itself costs here);
  2. the same slider driving the app's memory chart (what that chart's redraw adds);
  3. the app's Memory page with its whole sidebar.

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


def measure(url: str, n: int) -> list[float]:
    with sync_playwright() as p:
        b = p.chromium.launch(
            executable_path="/usr/bin/chromium",
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        pg = b.new_page(viewport={"width": 1600, "height": 1000})
        pg.goto(url)
        pg.wait_for_selector(IDLE, state="attached", timeout=60_000)
        pg.wait_for_selector(CHART, timeout=60_000)
        pg.wait_for_function(
            "() => document.querySelectorAll(\"[data-testid='stSkeleton']\").length === 0", timeout=60_000
        )
        thumb = pg.get_by_test_id("stSidebar").get_by_role("slider").first
        times = []
        for i in range(n + 3):
            pg.eval_on_selector(CHART, "e => { window.__old = e.innerHTML; }")
            thumb.focus()
            t = time.perf_counter()
            thumb.press("ArrowRight" if i % 2 == 0 else "ArrowLeft")  # context 4k <-> 8k
            pg.wait_for_function(
                "sel => { const e = document.querySelector(sel); return e && e.innerHTML !== window.__old; }",
                arg=CHART,
                polling="raf",
                timeout=30_000,
            )
            times.append((time.perf_counter() - t) * 1e3)
            pg.wait_for_selector(IDLE, state="attached")
            pg.wait_for_timeout(100)
        b.close()
    return sorted(times[3:])  # the first changes warm the caches


FLOOR_TIMES: list[float] = []


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
        finally:
            proc.terminate()
            proc.wait(10)


# The launcher's fixes applied to another script (gpuplan_ui.serve runs app.py only).
_LAUNCH = (
    "import sys; from gpuplan_ui import serve; serve.patch_nodelay(); serve.limit_runs(1); "
    "from streamlit.web import cli; app = sys.argv.pop(1); "
    "sys.argv = ['streamlit', 'run', app, *sys.argv[1:]]; cli.main()"
)


def main(n: int = 40) -> None:
    run_script("floor: one slider, a three-bar chart", FLOOR, n, floor=True)
    run_script("one slider, the app's memory chart", MEMORY_CHART_ONLY, n)
    proc, url = start([])
    try:
        # Memory and Cost: pre-training (the first sidebar slider is the sequence length); Performance: serving
        # with the model given by its size (the first slider is the size in billions of parameters)
        for page, query in (
            ("Memory", "workload=Pre-training"),
            ("Performance", "src=Model+size+only"),
            ("Cost", "workload=Pre-training"),
        ):
            name = f"the app's {page} page (whole sidebar)"
            report(name, measure(f"{url}/{page}?{query}", n))
    finally:
        proc.terminate()
        proc.wait(10)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 40)
