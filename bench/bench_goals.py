"""Issue 30's goals in one run: the answer's time for new questions and for traffic-only changes
(bench_answer.py), each page's change-to-settled and cold-open ratios to the floor page (bench_browser.py) and 100
sessions changing an input every 3 s under the shipped launcher, one process and two behind nginx
(bench_load.py). Prints each script's own figures, then one table of goal, figure and whether it is met. Asserts
nothing; about 8 minutes on the 2-core machine.

    python bench/bench_goals.py [--changes 20] [--sessions 100] [--seconds 60]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_answer  # noqa: E402
import bench_browser  # noqa: E402
import bench_load  # noqa: E402


def _p95(xs: list[float]) -> float:
    return sorted(xs)[int(0.95 * (len(xs) - 1))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--changes", type=int, default=20, help="slider changes per page in the browser")
    ap.add_argument("--sessions", type=int, default=100)
    ap.add_argument("--seconds", type=float, default=60)
    args = ap.parse_args()
    rows: list[tuple[str, str, str, bool]] = []

    answer = bench_answer.measure(24, 0)
    new, traffic = answer["new"], answer["traffic"]
    p50_ms, p95_ms = statistics.median(new), _p95(new)
    met = p50_ms <= 150 and p95_ms <= 400
    rows.append(("new question p50 / p95", "<= 150 / 400 ms", f"{p50_ms:.0f} / {p95_ms:.0f} ms", met))
    rows.append(("traffic-only change p95", "<= 30 ms", f"{_p95(traffic):.0f} ms", _p95(traffic) <= 30))

    pages = bench_browser.main(args.changes)
    for page, (p50, p95, cold) in pages.items():
        rows.append((f"{page}: change p50 / p95", "<= 2x / 3x", f"{p50:.2f}x / {p95:.2f}x", p50 <= 2 and p95 <= 3))
        rows.append((f"{page}: cold open", "<= 1.25x", f"{cold:.2f}x", cold <= 1.25))

    for extra, name in (([], "one process"), (["--replicas=2"], "--replicas 2")):
        lat = bench_load.run(args.sessions, args.seconds, extra, warm=True)
        p95 = _p95(lat) * 1e3
        rows.append((f"{args.sessions} sessions, {name}: p95", "<= 300 ms", f"{p95:.0f} ms", p95 <= 300))

    print(f"\n{'goal (issue 30)':<44} {'target':<18} {'measured':<18} met")
    for name, target, got, met in rows:
        print(f"{name:<44} {target:<18} {got:<18} {'yes' if met else 'no'}")


if __name__ == "__main__":
    main()
