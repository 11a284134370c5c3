"""The MoE step constants fitted without a left-out source (serving_loso.py, validation by source).

Two constants of the step model are fitted on measured MoE runs: the routed experts' efficiency factor per GPU
generation and weights format family (data/efficiency.csv ``moe_efficiency_factor``, read by roofline.StepCost as
``ex_f``) and the routing floor per expert, MoE layer and step (PerfAssumptions.moe_overhead_s_per_expert_layer).
bench/fit_tp_moe.py --fit stored them on the training rows of every source, three of the serving sources they are
checked against among them (``STORED_FIT_READ``), so such a source left out with the stored values is not left out
of them. For those three ``fit_moe_constants`` reads both again by the same rules on every OTHER source: the MoE
decode and throughput rows of the published serving runs (data/serving_measurements.csv) and of the single-request
table (data/measurements.csv), a single-request row counting as every serving source that cites the same document
(``publication``: the TensorRT-LLM DeepSeek-R1 blog's max-throughput rows are ``trtblog-dsr1``'s; TensorRT-LLM
0.9's Mixtral rows in perf-overview.md count as every serving source citing that file, ``trt014off`` among them).
Every other source is predicted with the stored constants, which never read it (``constants_without``): what the
app answers with is what is validated.

Rules (bench/fit_tp_moe.py's, every other source in place of every source's training rows): at each routing floor
of ``OVERHEAD_GRID``, each family that data/efficiency.csv gives a factor takes the ``FACTOR_GRID`` value with the
lowest median |error| over its rows (1.0 first on a tie); the floor is the one with the lowest median |error| over
the time-per-token rows at light load (at most 4 sequences: serving_rows.light_load; a single-request row's batch),
every family at its factor there (the smallest first on a tie; with no such row, no floor). A family with no row
outside the left-out source takes 1.0, what a family the file does not list takes.
"""

from __future__ import annotations

import math
import re
import statistics

from ..model.presets import get_preset
from . import serving_calibration as cal
from .serving_rows import light_load

# The serving sources among the rows the stored constants were fitted on: data/efficiency.csv's ``basis``
# (dstack-dsr1-*; trt-h200-fp8-dsr1 and trt-b200-nvfp4-dsr1, the TensorRT-LLM DeepSeek-R1 blog that trtblog-dsr1
# cites; trt014off-*) and PerfAssumptions.moe_overhead_s_per_expert_layer's description (dstack at 4 clients)
STORED_FIT_READ = ("dstack-dsr1", "trt014off", "trtblog-dsr1")
FACTOR_GRID = (1.0, 0.8, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1)
OVERHEAD_GRID = tuple(round(i * 0.05e-6, 12) for i in range(13))  # seconds per expert, MoE layer and step
SERVING_METRICS = ("itl", "tpot", "output_tokens_per_s")
SINGLE_METRICS = ("time_per_output_token", "decode_tokens_per_s", "output_tokens_per_s", "end_to_end_latency")
SINGLE_DECODE = ("time_per_output_token", "decode_tokens_per_s")


def _document(source: str) -> str | None:
    """The published document a row cites: its Markdown file's name, unless a generic README."""
    names = [n for n in re.findall(r"([\w.-]+\.mdx?)\b", str(source)) if n.lower() != "readme.md"]
    return names[0] if names else None


def publication(single_row: dict, serving_docs: dict[str, set[str]]) -> tuple[str, ...]:
    """The sources a single-request row counts as: the serving sources that cite the same document
    (``serving_docs``: document -> sources), else its publisher (its id up to the first '-')."""
    return tuple(sorted(serving_docs.get(_document(single_row["source"])) or {single_row["id"].split("-")[0]}))


def _serving_rows(meta, families, o: float, v: float) -> list[dict]:
    def keep(row) -> bool:
        return get_preset(row["model_preset"]).is_moe and row["metric"] in SERVING_METRICS

    moe = dict.fromkeys(families, v) | {"overhead": o}
    table = cal.compute_serving_table(client_costs={}, ingests={}, keep=keep, moe_factors=moe)
    out = []
    for r in table:
        m = meta[r["id"]]
        light = r["metric"] == "itl" and light_load(m)
        out.append({"id": r["id"], "sources": (cal.source_of(r["id"]),), "key": cal.moe_key(m), "light": light} | r)
    return out


def _single_rows(singles, docs, o: float, v: float) -> list[dict]:
    from .calibration import predict_row
    from .efficiency import PerfAssumptions

    pa = PerfAssumptions(moe_overhead_s_per_expert_layer=o)
    out = []
    for row in singles:
        measured = float(row["measured"])
        error = (predict_row(row, pa, moe_factor=v) - measured) / measured
        light = row["metric"] in SINGLE_DECODE and int(row["batch"] or 1) <= 4
        key = cal.moe_key(row)
        out.append({"id": row["id"], "sources": publication(row, docs), "key": key, "light": light, "error": error})
    return out


def grid_tables() -> dict[tuple[float, float], list[dict]]:
    """(routing floor, factor) -> every MoE decode and throughput row (serving and single-request) predicted with
    that floor and every family's factor at that value (serving runs with no client cost: time per token and
    tokens/s are the steps'), each with its ``sources`` (publication), ``key`` (cal.moe_key), ``light``, ``error``."""
    from ..hardware.catalog import moe_efficiency_factors
    from .calibration import load_measurements

    serving = cal.load_serving_measurements()
    meta = {r["id"]: r for r in serving.to_dict("records")}
    docs: dict[str, set[str]] = {}
    for r in meta.values():
        docs.setdefault(_document(r["source"]), set()).add(cal.source_of(r["id"]))
    docs.pop(None, None)
    singles = [
        r
        for r in load_measurements().to_dict("records")
        if get_preset(r["model_preset"]).is_moe and r["metric"] in SINGLE_METRICS
    ]
    families = {cal.moe_key(r) for r in meta.values() if get_preset(r["model_preset"]).is_moe}
    families |= set(moe_efficiency_factors())
    return {
        (o, v): _serving_rows(meta, families, o, v) + _single_rows(singles, docs, o, v)
        for o in OVERHEAD_GRID
        for v in FACTOR_GRID
    }


def _median_abs(rows: list[dict]) -> float | None:
    errs = [abs(r["error"]) for r in rows if r["error"] is not None]
    return statistics.median(errs) if errs else None


def fit_moe_constants(grid: dict[tuple[float, float], list[dict]], left_out: str | None = None) -> dict:
    """{"overhead": the routing floor, (architecture, family): its factor, ..., "read on": {the same keys: the
    sources each was read on}} fitted on every source but ``left_out`` by the module docstring's rules; a family
    with no row outside ``left_out`` is not in it."""
    from ..hardware.catalog import moe_efficiency_factors

    stored = sorted(moe_efficiency_factors())
    best = None
    for o in OVERHEAD_GRID:
        factors, read_on = {}, {}
        for key in stored:
            curve = []
            for v in FACTOR_GRID:
                rows = [r for r in grid[o, v] if r["key"] == key and left_out not in r["sources"]]
                err = _median_abs(rows)
                if err is not None:
                    curve.append((err, -v))
                    read_on[key] = ", ".join(sorted({s for r in rows for s in r["sources"]}))
            if curve:
                factors[key] = -min(curve)[1]
        light = [
            r
            for v in FACTOR_GRID
            for r in grid[o, v]
            if r["light"] and left_out not in r["sources"] and factors.get(r["key"], 1.0) == v
        ]
        err = _median_abs(light)
        err = math.inf if err is None else err  # no light row: the first floor, no floor at all
        if best is None or err < best[0]:
            read_on["overhead"] = ", ".join(sorted({s for r in light for s in r["sources"]}))
            best = (err, {"overhead": o, **factors, "read on": read_on})
    return best[1]


def constants_without(grid: dict[tuple[float, float], list[dict]], source: str) -> dict | None:
    """The MoE constants ``source``'s runs are predicted with when it is left out: ``fit_moe_constants`` without it
    where the stored ones read it (``STORED_FIT_READ``), else None (the stored ones)."""
    if source not in STORED_FIT_READ:
        return None
    return {k: v for k, v in fit_moe_constants(grid, source).items() if k != "read on"}


def factor_of(constants: dict | None, row: dict) -> float:
    """The routed experts' factor a run is predicted with under ``constants`` (None: data/efficiency.csv's)."""
    from ..hardware.catalog import moe_efficiency_factors

    key = cal.moe_key(row)
    return moe_efficiency_factors().get(key, 1.0) if constants is None else constants.get(key, 1.0)


def floor_of(constants: dict | None) -> float:
    """The routing floor per expert, MoE layer and step under ``constants`` (None: PerfAssumptions')."""
    from .efficiency import PerfAssumptions

    if constants is None or constants.get("overhead") is None:
        return PerfAssumptions().moe_overhead_s_per_expert_layer
    return constants["overhead"]
