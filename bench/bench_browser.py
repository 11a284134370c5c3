"""Browser latency: slider change -> updated chart in headless Debian chromium, p50 and p95.
Goal: p50 <= 60 ms, p95 <= 150 ms. Prints figures; asserts nothing.

    python bench/bench_browser.py [changes]
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from playwright.sync_api import sync_playwright  # noqa: E402

from bench.bench_load import start  # noqa: E402

CHART = "[data-testid='stPlotlyChart'] .main-svg"


def main(n: int = 40) -> None:
    proc, url = start([])
    try:
        with sync_playwright() as p:
            b = p.chromium.launch(
                executable_path="/usr/bin/chromium",
                headless=True,
                args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
            )
            pg = b.new_page(viewport={"width": 1600, "height": 1000})
            pg.goto(url + "/Memory")
            pg.wait_for_selector(
                "[data-testid='stApp'][data-test-script-state='notRunning']", state="attached", timeout=60_000
            )
            pg.wait_for_selector(CHART, timeout=60_000)
            pg.wait_for_function(
                "() => document.querySelectorAll(\"[data-testid='stSkeleton']\").length === 0", timeout=60_000
            )
            thumb = pg.get_by_test_id("stSidebar").get_by_role("slider").first
            thumb.focus()
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
                pg.wait_for_selector("[data-testid='stApp'][data-test-script-state='notRunning']", state="attached")
                pg.wait_for_timeout(100)
            b.close()
    finally:
        proc.terminate()
        proc.wait(10)
    times = sorted(times[3:])  # first changes warm the caches
    print(
        f"slider -> chart updated, {len(times)} changes: p50 {statistics.median(times):.0f} ms, "
        f"p95 {times[int(0.95 * (len(times) - 1))]:.0f} ms, max {times[-1]:.0f} ms"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 40)
