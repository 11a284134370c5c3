"""Rerun cost per page (AppTest, same process): each page's median rerun divided by a one-chart floor
page measured in the same run. Goal: <= 5x. Prints figures; asserts nothing.

Two floors are printed: a bare one-chart script, and the same chart under the app's shared sidebar
(the ~12 inputs and 7 page links the frame builds on every page; AppTest spends ~1-1.4 ms per widget). The ratio
uses the second: it isolates what each page adds. The app is copied to a temporary folder so the floor page can be
added to its navigation (gpuplan_ui/frame.py PAGES) without becoming a page of the real app."""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import shutil  # noqa: E402
import tempfile  # noqa: E402

from streamlit.testing.v1 import AppTest  # noqa: E402

FLOOR = """
import plotly.graph_objects as go
import streamlit as st
st.set_page_config(layout="wide")
st.title("floor")
st.plotly_chart(go.Figure(go.Bar(x=["a", "b", "c"], y=[1, 2, 3])))
"""
from gpuplan_ui.frame import PAGES as APP_PAGES  # noqa: E402

PAGES = [f"app_pages/{f}" for f, *_ in APP_PAGES]


def median_rerun(at: AppTest, n: int) -> float:
    at.run()  # warm: imports, caches
    times = []
    for _ in range(n):
        t = time.perf_counter()
        at.run()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


FLOOR_WITH_SIDEBAR = """
import plotly.graph_objects as go
import streamlit as st
from gpuplan_ui import page
page.setup("Floor")  # the frame (navigation, sidebar, scenario) has run before this page
st.plotly_chart(go.Figure(go.Bar(x=["a", "b", "c"], y=[1, 2, 3])))
"""


def main(n: int = 15) -> None:
    bare = median_rerun(AppTest.from_string(FLOOR, default_timeout=60), n)
    with tempfile.TemporaryDirectory() as tmp:
        app = Path(tmp) / "app"
        shutil.copytree(ROOT, app, ignore=shutil.ignore_patterns(".git", "test-output", "__pycache__", ".*cache"))
        (app / "app_pages" / "Floor.py").write_text(FLOOR_WITH_SIDEBAR)
        frame = app / "gpuplan_ui" / "frame.py"
        floor_page = '    ("Floor.py", "Floor", ":material/bolt:"),\n'
        frame.write_text(frame.read_text().replace("PAGES = (\n", "PAGES = (\n" + floor_page, 1))
        sys.path.insert(0, str(app))
        for mod in [m for m in sys.modules if m.startswith("gpuplan_ui")]:
            del sys.modules[mod]  # the copy's frame, with the floor page

        def run(page: str) -> float:
            at = AppTest.from_file(str(app / "app.py"), default_timeout=60)
            return median_rerun(at.switch_page(page), n)

        floor = run("app_pages/Floor.py")
        print(f"{'page':<34} {'median rerun ms':>16} {'x floor':>8}")
        print(f"{'bare one-chart script':<34} {bare:>16.1f} {'':>8}")
        print(f"{'floor: shared sidebar + one chart':<34} {floor:>16.1f} {1.0:>8.1f}")
        for page in PAGES:
            med = run(page)
            print(f"{page:<34} {med:>16.1f} {med / floor:>8.1f}")


if __name__ == "__main__":
    main()
