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


# A fixed per-request cost is read only where the run's GPU time is small and modelled right: prompts of at most
# FIT_MAX_INPUT_TOKENS (longer ones put the prefill model's error into the gap) in runs whose time per token the
# step model predicts within FIT_MAX_ITL_ERROR (a run it misses by more, say a ROCm fork of vLLM 0.6 on MI300X at
# 2x, is slow on the GPU: its first token's gap is that, not the request's cost).
FIT_MAX_INPUT_TOKENS = 1024
FIT_MAX_ITL_ERROR = 0.25


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


def _run_key(meta: pd.DataFrame, row_id: str) -> str:
    return cal.setup_key(meta.loc[row_id].to_dict() | {"id": row_id})


def itl_errors(zero: list[dict], meta: pd.DataFrame) -> dict[str, float]:
    """Each run's time-per-token error (its mean's where published, else the median of its statistics)."""
    by_run: dict[str, dict[str, float]] = {}
    for r in zero:
        if r["metric"] == "itl" and r["error"] is not None:
            by_run.setdefault(_run_key(meta, r["id"]), {})[r["statistic"]] = r["error"]
    return {k: v.get("mean", statistics.median(v.values())) for k, v in by_run.items()}


def fit_rows(zero: list[dict], meta: pd.DataFrame, left_out: str | None = None, keep=None) -> list[dict]:
    """The light-load first-token rows of online dense serving outside ``left_out`` (and where ``keep(row)``) with
    prompts of at most FIT_MAX_INPUT_TOKENS in runs whose time per token is predicted within FIT_MAX_ITL_ERROR,
    predicted with zero request costs (each with ``engine``, ``source`` and ``gap_s`` = measured - predicted in
    seconds)."""
    itl = itl_errors(zero, meta)
    out = []
    for r in zero:
        m = meta.loc[r["id"]]
        if (
            r["metric"] == "ttft"
            and r["error"] is not None
            and r["regime"] == cal.HEADLINE_REGIME
            and cal.source_of(r["id"]) != left_out
            and (keep is None or keep(r))
            and light_load(m)
            and int(m["input_tokens"]) <= FIT_MAX_INPUT_TOKENS
            and abs(itl.get(_run_key(meta, r["id"]), math.inf)) <= FIT_MAX_ITL_ERROR
        ):
            scale = 1e3 if m["unit"] == "ms" else 1.0
            out.append(
                {
                    "engine": cal.engine_of(m["engine"]),
                    "source": cal.source_of(r["id"]),
                    "gap_s": (r["measured"] - r["predicted"]) / scale,
                }
            )
    return out


def _by_source(rows: list[dict]) -> list[float]:
    """One figure per source: the median gap of its rows (a source with many runs gets one vote, as one with few)."""
    sources = sorted({r["source"] for r in rows})
    return [statistics.median(r["gap_s"] for r in rows if r["source"] == s) for s in sources]


def fit_request_costs(rows: list[dict], engines) -> dict[str, tuple[float, str, int]]:
    """engine -> (request_in_s, 'engine' or 'pooled', rows it was fitted on): the median over sources of each
    source's median gap for that engine; an engine no row has, the median over every (source, engine)'s."""
    pooled = [v for e in engines for v in _by_source([r for r in rows if r["engine"] == e])]
    out = {}
    for e in engines:
        own = [r for r in rows if r["engine"] == e]
        if own:
            out[e] = (max(0.0, statistics.median(_by_source(own))), "engine", len(own))
        else:
            out[e] = (max(0.0, statistics.median(pooled)) if pooled else 0.0, "pooled", len(rows))
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
