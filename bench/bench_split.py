"""Where a page's change-to-settled time goes (issue 30): for each arrow-key step of a sidebar slider, the browser's
times (ms after the keydown) of the BackMsg sent, of every ForwardMsg received (decoded: new_session with its run's
fragment ids, each delta's element and path, script_finished), of the chart's SVG changing, and long tasks.
Prints two changes' timelines and the medians (first message, chart delta, chart delta -> drawn); writes all to JSON.

    python bench/bench_split.py ROOT PAGE QUERY SLIDER CHANGES OUT.json
    python bench/bench_split.py . Memory workload=Pre-training "Sequence length (tokens)" 10 /tmp/memory.json
"""

import base64
import json
import statistics
import sys
import time
from pathlib import Path

root = Path(sys.argv[1]).resolve()
sys.path.insert(0, str(root))
from playwright.sync_api import sync_playwright  # noqa: E402
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg  # noqa: E402

from bench.bench_browser import CHART, IDLE, launch  # noqa: E402
from bench.bench_load import start  # noqa: E402

INIT = r"""
(() => {
 const O = window.WebSocket; window.__ws = []; window.__lt = [];
 class W extends O {
   constructor(...a) { super(...a);
     this.addEventListener('message', e => window.__ws.push({t: performance.now(), d: e.data})); }
   send(d) { window.__ws.push({t: performance.now(), out: 1}); return super.send(d); } }
 window.WebSocket = W;
 try { new PerformanceObserver(l => { for (const e of l.getEntries()) window.__lt.push([e.startTime, e.duration]); })
   .observe({entryTypes: ['longtask']}); } catch (e) {}
 document.addEventListener('keydown', e => { window.__kd = performance.now(); }, true);
})();
"""
DUMP = r"""() => { const out = window.__ws.map(m => { if (m.out) return {t: m.t, out: 1};
  let s = ''; const b = new Uint8Array(m.d);
  for (let i = 0; i < b.length; i += 0x8000) s += String.fromCharCode.apply(null, b.subarray(i, i + 0x8000));
  return {t: m.t, b: btoa(s), n: b.length}; });
  window.__ws = []; const lt = window.__lt; window.__lt = []; return {ws: out, lt}; }"""


def describe(b):
    m = ForwardMsg()
    m.ParseFromString(base64.b64decode(b))
    kind = m.WhichOneof("type")
    if kind == "delta":
        d = m.delta
        dk = d.WhichOneof("type")
        if dk == "new_element":
            dk = d.new_element.WhichOneof("type")
        elif dk == "add_block":
            dk = "block:" + (d.add_block.WhichOneof("type") or "")
        return f"{dk}@{'.'.join(map(str, m.metadata.delta_path))}"
    if kind == "ref_hash":
        return "REF"
    if kind == "new_session":
        return f"new_session run={str(m.metadata.run).strip()!r}"
    if kind == "script_finished":
        return f"script_finished {m.script_finished}"
    return kind


def run(url, n, slider):
    res = []
    with sync_playwright() as p:
        b = launch(p)
        pg = b.new_page(viewport={"width": 1600, "height": 1000})
        pg.add_init_script(INIT)
        pg.goto(url)
        pg.wait_for_selector(IDLE, state="attached", timeout=180_000)
        pg.wait_for_selector(CHART, timeout=180_000)
        pg.wait_for_timeout(1500)
        side = pg.get_by_test_id("stSidebar")
        thumb = side.get_by_role("slider", name=slider)
        for i in range(n + 3):
            pg.evaluate(DUMP)
            pg.eval_on_selector(CHART, "e => { window.__old = e.innerHTML; window.__done = 0; }")
            thumb.focus()
            t = time.perf_counter()
            thumb.press("ArrowRight" if i % 2 == 0 else "ArrowLeft")
            pg.wait_for_function(
                "sel => { const e = document.querySelector(sel); if (e && e.innerHTML !== window.__old) "
                "{ window.__done = performance.now(); return true; } return false; }",
                arg=CHART,
                polling="raf",
                timeout=180_000,
            )
            wall = (time.perf_counter() - t) * 1e3
            pg.wait_for_selector(IDLE, state="attached")
            pg.wait_for_timeout(300)
            kd, done = pg.evaluate("[window.__kd, window.__done]")
            d = pg.evaluate(DUMP)
            msgs = [(m["t"] - kd, "SEND" if m.get("out") else describe(m["b"]), m.get("n", 0)) for m in d["ws"]]
            lts = [(s - kd, dur) for s, dur in d["lt"] if s >= kd - 5]
            res.append({"wall": wall, "done": done - kd, "msgs": msgs, "lt": lts})
        b.close()
    return res[3:]


if __name__ == "__main__":
    page, query, slider, n = sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
    proc, url = start([])
    try:
        res = run(f"{url}/{page}?{query}", n, slider)
    finally:
        proc.terminate()
        proc.wait(10)
    Path(sys.argv[6]).write_text(json.dumps(res))
    for r in res[:2]:
        print(f"wall {r['wall']:.0f} done {r['done']:.0f}")
        for t, k, nb in r["msgs"]:
            print(f"   {t:7.1f} {k} {nb}")
        print("   longtasks", [(round(s), round(d)) for s, d in r["lt"]])

    def med(f):
        return statistics.median(f(r) for r in res)

    def first(r, want):
        return next((t for t, k, _ in r["msgs"] if want(k)), float("nan"))

    def chart_t(r):
        return first(r, lambda k: k.startswith("plotly_chart"))

    print(
        f"{page or 'Overview'}: wall p50 {med(lambda r: r['wall']):.0f}, "
        f"keydown->drawn {med(lambda r: r['done']):.0f}, "
        f"first msg {med(lambda r: first(r, lambda k: k != 'SEND')):.0f}, chart delta {med(chart_t):.0f}, "
        f"chart->drawn {med(lambda r: r['done'] - chart_t(r)):.0f}, msgs {med(lambda r: len(r['msgs'])):.0f}, "
        f"longtask sum {med(lambda r: sum(d for s, d in r['lt'])):.0f}"
    )
