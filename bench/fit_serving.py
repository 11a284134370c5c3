"""Fit the engines' fixed request costs (perf/schedulers.py) on the TRAINING rows of the published serving
measurements, and print the held-out error before and after. Prints figures; changes nothing.

    python bench/fit_serving.py
    python bench/fit_serving.py --write-loso   # every source left out in turn: data/serving_loso.csv

Each engine's ``request_in_s`` is fitted as below; ``--write-loso`` refits it once per source on every other
source's rows and stores that source's predictions (gpuplan_core/perf/serving_loso.py), then prints the errors.

Each engine's ``request_in_s`` is the median, over its training TTFT rows at light load (a closed loop of at most 4
clients, or the lowest request rate of a curve), of measured - predicted with the engine's costs set to zero.
"""

from __future__ import annotations

import statistics
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gpuplan_core.perf import schedulers  # noqa: E402
from gpuplan_core.perf import serving_calibration as sc_cal


def table_with(overrides: dict[str, float]) -> list[dict]:
    saved = dict(schedulers.LOOPS)
    for k, v in overrides.items():
        schedulers.LOOPS[k] = replace(schedulers.LOOPS[k], request_in_s=v)
    sc_cal._prediction.cache_clear()
    try:
        return sc_cal.compute_serving_table()
    finally:
        schedulers.LOOPS.clear()
        schedulers.LOOPS.update(saved)
        sc_cal._prediction.cache_clear()


def light(row: dict, meta) -> bool:
    m = meta.loc[row["id"]]
    if m["load_kind"] == "concurrency":
        return float(m["load"]) <= 4
    return float(m["load"]) <= 2.0


def summary(table, label):
    for s in sc_cal.serving_summary(table):
        print(
            f"  {label:<7} {s['regime']:<14} {s['metric']:<20} n={s['points']:>4} "
            f"median |err| {s['median_abs_error']:6.1%}  bias {s['median_error']:+6.1%}  "
            f"within 25% {s['within_25']:.0%}"
        )


def loso() -> None:
    from gpuplan_core.perf import serving_loso

    n = serving_loso.write_loso_table()
    serving_loso.loso_table.cache_clear()
    print(f"{n:,} left-out-source predictions written to {serving_loso.LOSO_FILE}")
    for s in serving_loso.left_out_summary(serving_loso.loso_table()):
        print(
            f"  {s['by']:<12} {s['group']:<24} {s['metric']:<20} n={s['points']:>4} "
            f"median |err| {s['median_abs_error']:6.1%}  bias {s['median_error']:+6.1%}"
        )


def main() -> None:
    if "--write-loso" in sys.argv:
        loso()
        return
    meta = sc_cal.load_serving_measurements().set_index("id")
    before = sc_cal.compute_serving_table()
    summary(before, "now")
    zero = table_with({k: 0.0 for k in schedulers.LOOPS})
    fitted = {}
    for engine in ("vllm", "sglang", "trtllm"):
        rows = [
            r
            for r in zero
            if r["split"] == "training"
            and r["metric"] == "ttft"
            and r["error"] is not None
            and r["regime"] == sc_cal.HEADLINE_REGIME
            and light(r, meta)
            and sc_cal.engine_of(meta.loc[r["id"], "engine"]) == engine
        ]
        if not rows:
            print(f"{engine}: no light-load training TTFT rows; kept {schedulers.LOOPS[engine].request_in_s}")
            continue
        secs = [(r["measured"] - r["predicted"]) / (1e3 if meta.loc[r["id"], "unit"] == "ms" else 1.0) for r in rows]
        fitted[engine] = max(0.0, statistics.median(secs))
        print(
            f"{engine}: request_in_s = {fitted[engine] * 1e3:.1f} ms from {len(rows)} training rows "
            f"({sorted({sc_cal.source_of(r['id']) for r in rows})})"
        )
    after = table_with(fitted)
    summary(after, "fitted")


if __name__ == "__main__":
    main()
