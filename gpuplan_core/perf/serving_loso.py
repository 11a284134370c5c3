"""Validation by source: every published serving source left out in turn (data/serving_measurements.csv).

For each source (a row id up to its last ``-``, as in serving_calibration.py) the one constant fitted on serving
data, the cost its benchmark CLIENT adds before the first token (clients.py ``BENCH_CLIENTS``), is fitted again on
the OTHER sources sent by the same client, by the rule bench/fit_serving.py uses (the median over those sources of
each one's median measured - predicted first-token time at light load with no client cost), and that source's
runs are simulated with it on top of the engine's own cost (schedulers.py ``request_in_s``). The client's cost is
read on its light-load runs of every model class (``FIT_REGIMES``: a client's HTTP, streaming and chat-template
path does not depend on the model behind the server), so GPUStack's Qwen3-8B latency runs, left out, take the cost
of its DeepSeek-R1 runs sent by the same `vllm bench serve` chat client. A source whose client sent no other
source's light-load runs gets a client cost of zero (``fit_from`` = "none"), as the app's own answer does.

The predictions are stored in data/serving_loso.csv (``python bench/fit_serving.py --write-loso`` writes it: about
two passes over every run); the errors ``calibrate --json`` reports are recomputed from that file, per source,
engine, GPU, model class (dense / MoE / MLA) and metric.
"""

from __future__ import annotations

import math
import statistics
from functools import lru_cache

import numpy as np
import pandas as pd

from ..common.data import DATA_DIR
from ..model.presets import get_preset
from . import moe_loso
from . import serving_calibration as cal
from .clients import BENCH_CLIENTS, client_of
from .schedulers import engine_loop
from .serving_rows import light_load

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
    "client",
    "engine_in_s",
    "client_in_s",
    "request_in_s",
    "fit_from",
    "fit_rows",
    "ingest_s_per_request",
    "ingest_s_per_token",
    "step_time_factor",
    "moe_factor",
    "moe_overhead_s",
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
# The regimes a client's cost is read in: online serving (closed loops and request rates) of dense and of
# mixture-of-experts models alike; not dense bursts, whose first tokens are the queue's (no MoE burst is light load).
FIT_REGIMES = (cal.HEADLINE_REGIME, "MoE")


def _run_key(meta: pd.DataFrame, row_id: str) -> str:
    return cal.setup_key(meta.loc[row_id].to_dict() | {"id": row_id})


def itl_errors(zero: list[dict], meta: pd.DataFrame) -> dict[str, float]:
    """Each run's time-per-token error (its mean's where published, else the median of its statistics)."""
    by_run: dict[str, dict[str, float]] = {}
    for r in zero:
        if r["metric"] == "itl" and r["error"] is not None:
            by_run.setdefault(_run_key(meta, r["id"]), {})[r["statistic"]] = r["error"]
    return {k: v.get("mean", statistics.median(v.values())) for k, v in by_run.items()}


def _gap_rows(zero: list[dict], meta: pd.DataFrame, left_out: str | None, keep, where, extra=None) -> list[dict]:
    """The first-token rows with a prediction outside ``left_out``, where ``keep(row)`` and ``where(row, what was
    run)``: each with ``engine``, ``source``, ``client``, ``measured_s``, ``gap_s`` = measured - predicted in
    seconds, and ``extra(what was run)``'s keys."""
    out = []
    for r in zero:
        m = meta.loc[r["id"]]
        source = cal.source_of(r["id"])
        if (
            r["metric"] == "ttft"
            and r["error"] is not None
            and source != left_out
            and (keep is None or keep(r))
            and where(r, m)
        ):
            scale = 1e3 if m["unit"] == "ms" else 1.0
            out.append(
                {
                    "engine": cal.engine_of(m["engine"]),
                    "source": source,
                    "client": client_of(source),
                    "measured_s": r["measured"] / scale,
                    "gap_s": (r["measured"] - r["predicted"]) / scale,
                    **(extra(m) if extra else {}),
                }
            )
    return out


def fit_rows(zero: list[dict], meta: pd.DataFrame, left_out: str | None = None, keep=None) -> list[dict]:
    """The light-load first-token rows of online serving (``FIT_REGIMES``: dense and MoE models) outside
    ``left_out`` (and where ``keep(row)``) with prompts of at most FIT_MAX_INPUT_TOKENS in runs whose time per token
    is predicted within FIT_MAX_ITL_ERROR, predicted with no client cost (``_gap_rows``)."""
    itl = itl_errors(zero, meta)

    def where(r, m) -> bool:
        return (
            r["regime"] in FIT_REGIMES
            and light_load(m)
            and int(m["input_tokens"]) <= FIT_MAX_INPUT_TOKENS
            and abs(itl.get(_run_key(meta, r["id"]), math.inf)) <= FIT_MAX_ITL_ERROR
        )

    return _gap_rows(zero, meta, left_out, keep, where)


def _by_source(rows: list[dict]) -> list[float]:
    """One figure per source: the median gap of its rows (a source with many runs gets one vote, as one with few)."""
    sources = sorted({r["source"] for r in rows})
    return [statistics.median(r["gap_s"] for r in rows if r["source"] == s) for s in sources]


def fit_client_costs(rows: list[dict], keys) -> dict[tuple[str, str], tuple[float, str, int]]:
    """(client, engine) -> (the cost in seconds, what it was fitted on, rows): the median over the client's sources
    of each source's median gap with that engine ('client and engine'); where the client has rows with other
    engines only, the same over every (source, engine) of the client ('client'); else 0.0 ('none'). At least 0."""
    out = {}
    for c, e in keys:
        own = [r for r in rows if r["client"] == c and r["engine"] == e]
        if own:
            out[c, e] = (max(0.0, statistics.median(_by_source(own))), "client and engine", len(own))
            continue
        others = [r for r in rows if r["client"] == c]
        votes = [
            v
            for x in sorted({r["engine"] for r in others})
            for v in _by_source([r for r in others if r["engine"] == x])
        ]
        out[c, e] = (max(0.0, statistics.median(votes)), "client", len(others)) if votes else (0.0, "none", 0)
    return out


def burst(meta_row: dict) -> bool:
    """A run that sent every request at once and states how many (the front end's fit, ``fit_ingest``)."""
    every = math.isinf(float(meta_row["load"])) or str(meta_row.get("arrival")) == "all_at_once"
    return every and not cal._blank(meta_row.get("requests"))


def ingest_rows(zero: list[dict], meta: pd.DataFrame, left_out: str | None = None, keep=None) -> list[dict]:
    """The first-token rows of bursts outside ``left_out`` (and where ``keep(row)``) predicted with no front end
    and no client cost (``_gap_rows``), each also with the burst's ``requests`` and prompt ``tokens`` in all."""

    def extra(m) -> dict:
        return {"requests": int(m["requests"]), "tokens": int(m["requests"]) * int(m["input_tokens"])}

    return _gap_rows(zero, meta, left_out, keep, lambda r, m: burst(m), extra)


def _ingest_of(rows: list[dict]) -> tuple[float, float]:
    """The front end's seconds per request and per prompt token (at least 0 each) that a burst's whole intake adds
    to its mean first-token time (every request reaches the engine when the burst is taken in: clients.ingest_done),
    by least squares of each row's error relative to its measured time (a 15-minute burst counts as much as a
    20-second one). Non-negative in two unknowns: the unconstrained solution if both are at least 0, else the best
    of either alone (at least 0) and neither."""
    w = np.array([1 / r["measured_s"] for r in rows])
    x = np.array([[r["requests"], r["tokens"]] for r in rows], dtype=float) * w[:, None]
    y = np.array([r["gap_s"] for r in rows]) * w
    both = np.linalg.lstsq(x, y, rcond=None)[0]
    if (both >= 0).all():
        return float(both[0]), float(both[1])
    fits = [np.zeros(2)]
    for j in (0, 1):
        f = np.zeros(2)
        f[j] = max(0.0, float(x[:, j] @ y) / float(x[:, j] @ x[:, j]))
        fits.append(f)
    best = min(fits, key=lambda f: float(((y - x @ f) ** 2).sum()))
    return float(best[0]), float(best[1])


def fit_ingest(rows: list[dict], keys) -> dict[tuple[str, str], tuple[float, float, str, int]]:
    """(client, engine) -> (seconds per request, per prompt token, what it was fitted on, rows): ``_ingest_of`` the
    client's burst rows with that engine ('client and engine'); where the client sent bursts to other engines only,
    of all its burst rows ('client'); else none."""
    out = {}
    for c, e in keys:
        own = [r for r in rows if r["client"] == c and r["engine"] == e]
        pool = own or [r for r in rows if r["client"] == c]
        if not pool:
            out[c, e] = (0.0, 0.0, "none", 0)
            continue
        out[c, e] = (*_ingest_of(pool), "client and engine" if own else "client", len(pool))
    return out


def step_fit_run(meta_row: dict) -> bool:
    """A run a release line's step factor is read on (``fit_step_factors``): a burst (every request at once) of a
    dense model at fixed, stated lengths, on a line older than the kernel tables' (hardware/engines.py ``LATEST``
    is theirs); its output tokens/s is then the engine's steps alone, and the lengths it ran are the ones simulated.
    (The MoE step model has an open error of its own, README.)"""
    from ..hardware.engines import LATEST

    engine = cal.engine_of(meta_row["engine"])
    version = cal.version_of(meta_row)
    every = math.isinf(float(meta_row["load"])) or str(meta_row.get("arrival")) == "all_at_once"
    return (
        version is not None
        and version != LATEST.get(engine)
        and every
        and meta_row["metric"] == "output_tokens_per_s"
        and cal._blank(meta_row.get("length_dataset"))  # stated lengths ("not_stated" is not)
        and not cal._blank(meta_row.get("length_spread"))
        and float(meta_row["length_spread"]) == 0
        and not get_preset(meta_row["model_preset"]).is_moe
    )


def fit_step_factors(ones: list[dict], meta: pd.DataFrame, left_out: str | None = None) -> dict[tuple, tuple]:
    """(engine, release line) -> (its step factor, the sources it was read on, rows): per source outside
    ``left_out``, the median over its ``step_fit_run`` rows of the predicted over the measured output tokens/s with
    every step at the step model's time (``ones``: predicted with the factors at 1.0); then the median over the
    line's sources. A line with no such row is not in the answer (its factor stays 1.0)."""
    by: dict[tuple, dict[str, list[float]]] = {}
    for r in ones:
        source = cal.source_of(r["id"])
        m = meta.loc[r["id"]].to_dict() | {"id": r["id"]}
        if source == left_out or r["predicted"] is None or not step_fit_run(m):
            continue
        key = (cal.engine_of(m["engine"]), cal.version_of(m))
        by.setdefault(key, {}).setdefault(source, []).append(r["predicted"] / r["measured"])
    return {
        key: (
            statistics.median(statistics.median(v) for v in per.values()),
            ", ".join(sorted(per)),
            sum(len(v) for v in per.values()),
        )
        for key, per in by.items()
    }


def step_fit_table() -> list[dict]:
    """The ``step_fit_run`` rows predicted with every release line's step factor at 1.0 (what the factors are read
    on)."""
    meta = cal.load_serving_measurements()
    keep = {i for i, row in zip(meta["id"], meta.to_dict("records"), strict=True) if step_fit_run(row)}
    return cal.compute_serving_table(client_costs={}, ingests={}, step_factors={}, keep=lambda row: row["id"] in keep)


CLIENT_KEYS = tuple((c, e) for c in BENCH_CLIENTS for e in ("vllm", "sglang", "trtllm"))
INGEST_KEYS = tuple((c, e) for c, e in CLIENT_KEYS if BENCH_CLIENTS[c].front_end)  # clients.BenchClient.front_end


def _moe(row: dict) -> bool:
    return get_preset(row["model_preset"]).is_moe


def compute_loso_table() -> list[dict]:
    """Every published serving point predicted with its client's cost, its front end, its release line's step factor
    and the MoE constants (perf/moe_loso.py) fitted without its source; the client costs and front ends are read on
    runs predicted with no client cost and those MoE constants."""
    meta = cal.load_serving_measurements().set_index("id")
    stored = cal.compute_serving_table(client_costs={}, ingests={})
    ones = step_fit_table()
    grid = moe_loso.grid_tables()
    out = []
    for source in sorted({cal.source_of(i) for i in meta.index}):
        moe = moe_loso.constants_without(grid, source)
        zero = stored
        if moe is not None:
            zero = [r for r in stored if not _moe(meta.loc[r["id"]])]
            zero += cal.compute_serving_table(client_costs={}, ingests={}, keep=_moe, moe_factors=moe)
        zero_by_id = {r["id"]: r["predicted"] for r in zero}
        fitted = fit_client_costs(fit_rows(zero, meta, source), CLIENT_KEYS)
        costs = {c: v[0] for c, v in fitted.items()}
        ingests = {c: v[:2] for c, v in fit_ingest(ingest_rows(zero, meta, source), INGEST_KEYS).items()}
        factors = {k: v[0] for k, v in fit_step_factors(ones, meta, source).items()}
        table = cal.compute_serving_table(
            sources=frozenset({source}), client_costs=costs, ingests=ingests, step_factors=factors, moe_factors=moe
        )
        client = client_of(source)
        for r in table:
            m = meta.loc[r["id"]]
            engine = cal.engine_of(m["engine"])
            own = engine_loop(engine).request_in_s
            cost, fit_from, n = fitted.get((client, engine), (0.0, "none", 0))
            per_request, per_token = ingests.get((client, engine), (0.0, 0.0))
            moe_row = model_class(m["model_preset"]) != "dense"
            line = cal.release_line(engine, cal.version_of(m.to_dict()))
            out.append(
                {
                    **{k: r[k] for k in ("id", "regime", "metric", "statistic", "measured", "predicted", "error")},
                    "source": source,
                    "engine": engine,
                    "gpu": m["gpu"],
                    "model_class": model_class(m["model_preset"]),
                    "predicted_zero_cost": zero_by_id[r["id"]],
                    "client": client or "unknown",
                    "engine_in_s": own,
                    "client_in_s": cost,
                    "request_in_s": own + cost,
                    "fit_from": fit_from,
                    "fit_rows": n,
                    "ingest_s_per_request": per_request,
                    "ingest_s_per_token": per_token,
                    "step_time_factor": factors.get((engine, line), 1.0),
                    "moe_factor": moe_loso.factor_of(moe, m.to_dict()) if moe_row else None,
                    "moe_overhead_s": moe_loso.floor_of(moe) if moe_row else None,
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
