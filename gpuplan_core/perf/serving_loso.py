"""Validation by source: every published serving source left out in turn (data/serving_measurements.csv).

For each source (a row id up to its last ``-``, as in serving_calibration.py) the constants fitted on serving data,
the engines' fixed request costs (``request_in_s`` in schedulers.py), are fitted again on every OTHER source's rows
by the rule bench/fit_serving.py uses (the median of measured - predicted first-token time at light load with the
costs set to zero, per engine), and that source's runs are simulated with them. An engine no other source has a
light-load first-token row of takes the median over every engine's such rows (``fit_from`` = "pooled").

The predictions are stored in data/serving_loso.csv (``python bench/fit_serving.py --write-loso`` writes it: about
two passes over every run); the errors ``calibrate --json`` reports are recomputed from that file, per source,
engine, GPU, model class (dense / MoE / MLA) and metric.
"""

from __future__ import annotations

import math
import statistics
from contextlib import contextmanager
from dataclasses import replace
from functools import lru_cache

import pandas as pd

from ..common.data import DATA_DIR
from ..model.presets import get_preset
from . import schedulers
from . import serving_calibration as cal

LOSO_FILE = DATA_DIR / "serving_loso.csv"
GROUPINGS = ("all", "regime", "source", "engine", "gpu", "model_class")
LOSO_COLUMNS = (
    "id",
    "source",
    "engine",
    "gpu",
    "model_class",
    "regime",
    "metric",
    "statistic",
    "measured",
    "predicted",
    "error",
    "predicted_zero_cost",
    "request_in_s",
    "fit_from",
    "fit_rows",
)


def model_class(preset: str) -> str:
    """'MLA' (multi-head latent attention, DeepSeek-V3/R1: also MoE), 'MoE' or 'dense'."""
    m = get_preset(preset)
    return "MLA" if m.is_mla else "MoE" if m.is_moe else "dense"


def light_load(meta_row: dict) -> bool:
    """The light-load runs the request cost is fitted on: a closed loop of at most 4 clients, or at most 2
    requests/s (bench/fit_serving.py)."""
    if meta_row["load_kind"] == "concurrency":
        return float(meta_row["load"]) <= 4
    return float(meta_row["load"]) <= 2.0


@contextmanager
def request_costs(overrides: dict[str, float]):
    """Run the simulation with these engines' ``request_in_s`` (the predictions' cache cleared before and after)."""
    saved = dict(schedulers.LOOPS)
    for k, v in overrides.items():
        schedulers.LOOPS[k] = replace(schedulers.LOOPS[k], request_in_s=v)
    cal._prediction.cache_clear()
    try:
        yield
    finally:
        schedulers.LOOPS.clear()
        schedulers.LOOPS.update(saved)
        cal._prediction.cache_clear()


def fit_rows(zero: list[dict], meta: pd.DataFrame, left_out: str) -> list[dict]:
    """The light-load first-token rows of online dense serving outside ``left_out``, predicted with zero request
    costs (each with ``engine`` and ``gap_s`` = measured - predicted in seconds)."""
    out = []
    for r in zero:
        m = meta.loc[r["id"]]
        if (
            r["metric"] == "ttft"
            and r["error"] is not None
            and r["regime"] == cal.HEADLINE_REGIME
            and cal.source_of(r["id"]) != left_out
            and light_load(m)
        ):
            scale = 1e3 if m["unit"] == "ms" else 1.0
            out.append({"engine": cal.engine_of(m["engine"]), "gap_s": (r["measured"] - r["predicted"]) / scale})
    return out


def fit_request_costs(rows: list[dict], engines) -> dict[str, tuple[float, str, int]]:
    """engine -> (request_in_s, 'engine' or 'pooled', rows it was fitted on)."""
    pooled = [r["gap_s"] for r in rows]
    out = {}
    for e in engines:
        own = [r["gap_s"] for r in rows if r["engine"] == e]
        if own:
            out[e] = (max(0.0, statistics.median(own)), "engine", len(own))
        else:
            out[e] = (max(0.0, statistics.median(pooled)) if pooled else 0.0, "pooled", len(pooled))
    return out


def compute_loso_table() -> list[dict]:
    """Every published serving point predicted with request costs fitted without its source (slow: two passes)."""
    meta = cal.load_serving_measurements().set_index("id")
    engines = ("vllm", "sglang", "trtllm")
    with request_costs(dict.fromkeys(engines, 0.0)):
        zero = cal.compute_serving_table()
    zero_by_id = {r["id"]: r["predicted"] for r in zero}
    out = []
    for source in sorted({cal.source_of(i) for i in meta.index}):
        fitted = fit_request_costs(fit_rows(zero, meta, source), engines)
        with request_costs({e: v[0] for e, v in fitted.items()}):
            table = cal.compute_serving_table(sources=frozenset({source}))
        for r in table:
            m = meta.loc[r["id"]]
            engine = cal.engine_of(m["engine"])
            cost, fit_from, n = fitted[engine]
            out.append(
                {
                    **{k: r[k] for k in ("id", "regime", "metric", "statistic", "measured", "predicted", "error")},
                    "source": source,
                    "engine": engine,
                    "gpu": m["gpu"],
                    "model_class": model_class(m["model_preset"]),
                    "predicted_zero_cost": zero_by_id[r["id"]],
                    "request_in_s": cost,
                    "fit_from": fit_from,
                    "fit_rows": n,
                }
            )
    return [{k: r[k] for k in LOSO_COLUMNS} for r in out]


def write_loso_table(path=LOSO_FILE) -> int:
    table = compute_loso_table()
    pd.DataFrame(table).to_csv(path, index=False, float_format="%.6g")
    return len(table)


@lru_cache(maxsize=1)
def loso_table() -> list[dict]:
    """The stored left-out-source predictions (data/serving_loso.csv)."""
    rows = pd.read_csv(LOSO_FILE).to_dict("records")
    for r in rows:
        for k in ("predicted", "error", "predicted_zero_cost"):
            if isinstance(r[k], float) and math.isnan(r[k]):
                r[k] = None
    return rows


def left_out_summary(table: list[dict]) -> list[dict]:
    """Per grouping (all, source, engine, GPU, model class), group and metric: points with a prediction, median
    absolute error and median signed error (+: predicted above measured)."""
    out = []
    for by in GROUPINGS:
        groups = sorted({"all" if by == "all" else str(r[by]) for r in table})
        for group in groups:
            for metric in cal.METRICS:
                errs = [
                    r["error"]
                    for r in table
                    if r["error"] is not None and r["metric"] == metric and (by == "all" or str(r[by]) == group)
                ]
                if errs:
                    out.append(
                        {
                            "by": by,
                            "group": group,
                            "metric": metric,
                            "points": len(errs),
                            "median_abs_error": statistics.median(abs(e) for e in errs),
                            "median_error": statistics.median(errs),
                        }
                    )
    return out
