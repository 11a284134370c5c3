"""Serving under load against published measurements (data/serving_measurements.csv), with its own holdout.

Each row says only what was run: model, GPU, tensor parallel, formats, lengths, the engine (its scheduling policy,
schedulers.py) and how the benchmark client sent load (closed loop of N clients, Poisson, all at once; fixed,
uniform or dataset lengths; how many requests). The simulation predicts it with the defaults every user gets.

The split (``held_out``): every metric of one published run goes together, and a third of the runs of each
source (a row id up to its last ``-``) are held out, chosen by the CRC-32 of the run's description. The one
constant fitted on serving data, each benchmark client's cost before the first token (clients.py ``BENCH_CLIENTS``,
applied only to the runs that client sent, on top of the engine's own), is fitted on training rows only
(bench/fit_serving.py); the errors the README and Methodology state are the held-out ones. The predictions are
stored in data/serving_calibration.csv (``python -m gpuplan_core calibrate --write-serving`` writes it; a test
holds that it is what the code predicts), so error bands cost nothing at start-up.
"""

from __future__ import annotations

import dataclasses
import math
import zlib
from functools import lru_cache

import pandas as pd

from ..common.data import DATA_DIR
from ..model.presets import get_preset
from .serving_rows import (  # noqa: F401  (engine_of, version_of, _format_of: this module's names before the split)
    _blank,
    _format_of,
    _rank_load,
    attention_dp_of,
    dp_chunk_share,
    engine_of,
    experts_tp_of,
    max_model_len_of,
    moe_key,
    policy_of,
    server_limits_of,
    shape_of,
    unchunked,
    version_of,
)

PREDICTIONS_FILE = DATA_DIR / "serving_calibration.csv"
HEADLINE_REGIME = "online, dense"
SERVING_REGIMES = {
    HEADLINE_REGIME: "closed-loop concurrency sweeps and request-rate sweeps of dense models",
    "offline burst": "every request queued at once (max-throughput runs of a stated number of requests)",
    "MoE": "mixture-of-experts models (DeepSeek-R1/V3 on 8 x H200 or MI300X, early-2025 engines)",
}
METRICS = ("ttft", "itl", "output_tokens_per_s")  # reported; a row's tpot counts as itl

# (metric, statistic) -> the ServingResult field it is compared with
PREDICTED = {
    ("ttft", "mean"): "ttft_mean_s",
    ("ttft", "p50"): "ttft_p50_s",
    ("ttft", "median"): "ttft_p50_s",
    ("ttft", "p99"): "ttft_p99_s",
    ("itl", "mean"): "tpot_mean_s",
    ("itl", "p50"): "tpot_p50_s",
    ("itl", "median"): "tpot_p50_s",
    ("itl", "p99"): "itl_p99_s",
    ("tpot", "mean"): "tpot_mean_s",
    ("tpot", "median"): "tpot_mean_s",
    ("tpot", "p50"): "tpot_mean_s",
}


@lru_cache(maxsize=2)
def load_serving_measurements(path: str | None = None) -> pd.DataFrame:
    return pd.read_csv(path or DATA_DIR / "serving_measurements.csv")


def source_of(row_id: str) -> str:
    return row_id.rsplit("-", 1)[0]


SETUP_COLUMNS = (
    "engine",
    "engine_version",
    "gpu",
    "tensor_parallel",
    "model_preset",
    "weights_format",
    "kv_format",
    "input_tokens",
    "output_tokens",
    "load_kind",
    "load",
)


def setup_key(row: dict) -> str:
    """One published run: its source and everything that was run (every metric of a run shares it)."""
    return "|".join([source_of(row["id"]), *(str(row[c]) for c in SETUP_COLUMNS)])


def held_out(row: dict) -> bool:
    """Whether a row is held out: every metric of a run together, a third of the runs of each source, chosen by
    the CRC-32 of the run's description (deterministic, and blind to the load level or the metric)."""
    return zlib.crc32(setup_key(row).encode()) % 3 == 2


@lru_cache(maxsize=1024)
def _prediction(
    model: str,
    gpu: str,
    tp: int,
    wf: str,
    kvf: str,
    i: int,
    *,
    o: int,
    kind: str,
    load: float,
    engine: str,
    shape: tuple[str, str, float, int | None],
    request_in_s: float | None = None,
    decode_time_factor: float = 1.0,
    client_in_s: float = 0.0,
    ingest: tuple[float, float] = (0.0, 0.0),
    version: str | None = None,
    max_model_len: int | None = None,
    server: tuple[tuple[str, int], ...] = (),
    ep: int = 1,
    chunk_share: int = 1,
    experts_tp: bool = False,
    step_factor: float | None = None,
    policy: str | None = None,
    moe: tuple[float, float | None] | None = None,
) -> dict | None:
    """The simulated run of one published setup: the ServingResult's fields, and ``throughput`` as the benchmark
    counts it (all output tokens over the run's duration). ``request_in_s`` and ``decode_time_factor``: a
    calibrated deployment's constants (perf/deployment_fit.py; the defaults are the engine's own);
    ``client_in_s``: the benchmark client's first-token cost, added to the engine's; ``ingest``: its serial front
    end (seconds per request and per prompt token, clients.py); ``version``: the engine's release line the run used;
    ``max_model_len``: the context its server was started with (None: the model's); ``server``: the limits its
    server was started with (serving_rows.server_limits_of); ``ep``: its MoE model ran expert parallel over that many
    GPUs with attention data-parallel (serving_rows.attention_dp_of): one rank is simulated with its share of the
    clients, rate or requests (``_rank_load``), its throughput x the ranks that ran; ``chunk_share``: what the engine
    divides each rank's prefill budget by (serving_rows.dp_chunk_share); ``experts_tp``: its experts ran
    tensor-parallel beside the DP ranks (serving_rows.experts_tp_of); ``step_factor``: the release line's step
    time over the step model's in place of its stored one (hardware/engines.py; a left-out-source fit); ``policy``:
    the engine's scheduling policy where the engine profile's is not it (serving_rows.policy_of); ``moe``: the routed
    experts' factor and routing floor in place of the stored ones (a left-out-source fit, perf/moe_loso.py)."""
    from ..scenario.scenario import Scenario
    from .replica import replica_for, scenario_limits
    from .schedulers import engine_loop
    from .serving import Sim, serve
    from .simulate import Shape

    if client_in_s:
        request_in_s = (engine_loop(engine).request_in_s if request_in_s is None else request_in_s) + client_in_s

    sc = Scenario(
        preset=model,
        gpu=gpu,
        tp=tp,
        gpus=tp,
        weights_format=wf,
        kv_format=kvf,
        input_tokens=i,
        output_tokens=o,
        engine=engine,
        engine_version=version,
        request_in_s=request_in_s,
        decode_time_factor=decode_time_factor,
        **{k: v for k, v in server if k in ("max_num_seqs", "max_num_batched_tokens")},
    )
    try:
        r, _ = replica_for(sc, ep=ep)
    except ValueError:
        return None
    ep = r.wl.ep
    if experts_tp and ep > 1:  # the experts tensor-parallel over the DP ranks' GPUs (serving_rows.experts_tp_of)
        r = dataclasses.replace(r, wl=dataclasses.replace(r.wl, experts_tp=True))
    if step_factor is not None:
        r = dataclasses.replace(r, wl=dataclasses.replace(r.wl, step_time_factor=step_factor))
    if moe is not None:
        r = dataclasses.replace(r, wl=dataclasses.replace(r.wl, moe_efficiency=moe[0]))
        if moe[1] is not None:
            r = dataclasses.replace(r, pa=r.pa.model_copy(update={"moe_overhead_s_per_expert_layer": moe[1]}))
    if policy is not None:
        r = dataclasses.replace(r, limits=r.limits.model_copy(update={"policy": policy}))
    if chunk_share > 1 and not any(k == "max_num_batched_tokens" for k, _ in server):
        budget = max(16, r.limits.max_num_batched_tokens // chunk_share)
        r = dataclasses.replace(r, limits=r.limits.model_copy(update={"max_num_batched_tokens": budget}))
    if max_model_len is not None:
        r = dataclasses.replace(r, limits=scenario_limits(r.gpu, sc.assumptions, max_model_len))
    if ("chunked_prefill", 0) in server:
        r = dataclasses.replace(r, limits=unchunked(r, version, max_model_len or r.m.max_context_tokens, server))
    arrival, lengths, spread, requests = shape
    burst = math.isinf(load) or arrival == "all_at_once"
    if burst:  # every request queued at once: as many clients as requests
        requests = -(-requests // ep) if requests else 4 * max(1, r.max_running)
        conc, rate = requests, None
    elif kind == "concurrency":
        conc, rate = int(load), None
    else:
        conc, rate = None, load
    conc, rate, ranks = _rank_load(conc, rate, ep) if not burst else (conc, rate, ep)
    if ranks > 1 and (lengths != "fixed" or not (burst or kind == "concurrency")):  # step_queues.rank_wait
        r = dataclasses.replace(r, wl=dataclasses.replace(r.wl, dp_ranks=ranks))
    if requests and not burst and ranks > 1:  # the run's requests, spread as its load is
        requests = -(-requests // ranks)
    sim = Sim(
        r,
        Shape(
            arrival="bursty" if arrival == "bursty" else "poisson",
            lengths=lengths,
            length_spread=spread,
            requests=requests,
            ingest_s_per_request=ingest[0],
            ingest_s_per_token=ingest[1],
        ),
    )
    res = serve(r, concurrency=conc, request_rate=rate, steps=sim)
    run = sim.run(conc, rate)
    out = res.model_dump()
    out["throughput"] = ranks * run.output_tokens_total / run.makespan_s if run.makespan_s > 0 else None
    out["burst"] = burst
    return out


def release_line(engine: str, version: str | None) -> str | None:
    """The release line a run's (engine, version_of) runs as: its own, or the engine's latest where None."""
    from ..hardware.engines import LATEST

    return version or LATEST.get(engine)


def serving_regime(row: dict) -> str:
    """Which regime a published serving point belongs to (errors are reported per regime)."""
    if get_preset(row["model_preset"]).is_moe:
        return "MoE"
    if math.isinf(float(row["load"])) or str(row.get("arrival")) == "all_at_once":
        return "offline burst"
    return HEADLINE_REGIME


def _predicted_value(row: dict, pred: dict | None) -> float | None:
    metric, stat = row["metric"], str(row.get("statistic") or "mean").strip().lower()
    if pred is None or pred["saturated"]:
        return None
    if metric == "output_tokens_per_s":
        return pred["throughput"]
    key = PREDICTED.get((metric, stat))
    if key is None or pred.get(key) is None:
        return None
    return pred[key] * (1e3 if row["unit"] == "ms" else 1.0)


def predict_row(
    row: dict,
    request_in_s: float | None = None,
    decode_time_factor: float = 1.0,
    client_costs: dict | None = None,
    ingests: dict | None = None,
    step_factors: dict | None = None,
    moe_factors: dict | None = None,
) -> dict | None:
    """One published serving point predicted now, with the engine's request cost and the cost of the benchmark
    client that sent the row's source (clients.py; ``client_costs``: (client, engine) -> seconds in place of the fitted
    ones; ``ingests``: (client, engine) -> its front end's (per request, per token) seconds) as they stand (None for a
    burst's first-token time where the row does not state the burst's size);
    ``request_in_s`` and ``decode_time_factor``: a calibrated deployment's constants in their place, with no
    client cost on top (perf/deployment_fit.py); ``step_factors``: (engine, release line) -> the line's step time
    over the step model's in place of the stored ones (hardware/engines.py ``step_time_factor``; a line not in it:
    1.0); ``moe_factors``: serving_rows.moe_key -> the routed experts' factor (a key not in it: 1.0), "overhead" -> the
    routing floor per expert and layer, in place of the stored ones (perf/moe_loso.py)."""
    from .clients import client_cost, client_ingest

    load = float(row["load"])
    if (
        row["metric"] == "ttft"
        and (math.isinf(load) or row.get("arrival") == "all_at_once")
        and _blank(row.get("requests"))
    ):
        return None  # a burst's first-token time depends on its size, which the row does not state
    engine = engine_of(row["engine"])
    version = version_of(row)
    step_factor = None if step_factors is None else step_factors.get((engine, release_line(engine, version)), 1.0)
    pred = _prediction(
        row["model_preset"],
        row["gpu"],
        int(row["tensor_parallel"]),
        _format_of(row["weights_format"]),
        _format_of(row["kv_format"]),
        int(row["input_tokens"]),
        o=int(row["output_tokens"]),
        kind=row["load_kind"],
        load=load,
        engine=engine,
        shape=shape_of(row),
        request_in_s=request_in_s,
        decode_time_factor=decode_time_factor,
        client_in_s=0.0 if request_in_s is not None else client_cost(source_of(row["id"]), engine, client_costs),
        ingest=(0.0, 0.0) if request_in_s is not None else client_ingest(source_of(row["id"]), engine, ingests),
        version=version,
        max_model_len=max_model_len_of(row),
        server=server_limits_of(row),
        ep=attention_dp_of(row) if get_preset(row["model_preset"]).is_moe else 1,
        chunk_share=dp_chunk_share(row) if get_preset(row["model_preset"]).is_moe else 1,
        experts_tp=experts_tp_of(row) if get_preset(row["model_preset"]).is_moe else False,
        step_factor=step_factor,
        policy=policy_of(row),
        moe=None if moe_factors is None else (moe_factors.get(moe_key(row), 1.0), moe_factors.get("overhead")),
    )
    value = _predicted_value(row, pred)
    measured = float(row["measured"])
    return {
        "id": row["id"],
        "split": "held out" if held_out(row) else "training",
        "regime": serving_regime(row),
        "metric": "itl" if row["metric"] == "tpot" else row["metric"],
        "statistic": str(row.get("statistic") or "mean"),
        "measured": measured,
        "predicted": value,
        "error": None if value is None else (value - measured) / measured,
        "predicted_saturated": bool(pred and pred["saturated"]),
    }


def compute_serving_table(
    path: str | None = None,
    sources: frozenset[str] | None = None,
    client_costs: dict | None = None,
    ingests: dict | None = None,
    step_factors: dict | None = None,
    keep=None,
    moe_factors: dict | None = None,
) -> list[dict]:
    """Every published serving point predicted now (slow: one simulated run per setup); ``sources``: only the
    rows of those sources (row-id prefixes); ``client_costs``: the benchmark clients' costs in place of the
    fitted ones, ``ingests`` their front ends, ``step_factors`` the release lines' step factors, ``moe_factors``
    the MoE constants (predict_row); ``keep``: only the rows where ``keep(row)``."""
    frame = load_serving_measurements(path)
    rows = []
    for row in frame.to_dict("records"):
        if (sources is not None and source_of(row["id"]) not in sources) or (keep is not None and not keep(row)):
            continue
        kw = {"step_factors": step_factors, "moe_factors": moe_factors}
        out = predict_row(row, client_costs=client_costs, ingests=ingests, **kw)
        if out is not None:
            rows.append(out)
    return rows


def write_serving_table(path=PREDICTIONS_FILE) -> int:
    table = compute_serving_table()
    pd.DataFrame(table).to_csv(path, index=False, float_format="%.6g")
    return len(table)


@lru_cache(maxsize=1)
def serving_table() -> list[dict]:
    """The stored predictions (data/serving_calibration.csv) joined with what each row says was run."""
    stored = pd.read_csv(PREDICTIONS_FILE)
    meta = load_serving_measurements().set_index("id")
    out = []
    for p in stored.to_dict("records"):
        m = meta.loc[p["id"]]
        pred = None if _blank(p["predicted"]) else float(p["predicted"])
        out.append(
            {
                **p,
                "predicted": pred,
                "error": None if pred is None else float(p["error"]),
                "engine": f"{m['engine']} {m['engine_version']}",
                "gpu": m["gpu"],
                "tp": int(m["tensor_parallel"]),
                "model": m["model_preset"],
                "lengths": f"{int(m['input_tokens'])}/{int(m['output_tokens'])}",
                "load": f"{m['load_kind'].replace('_', ' ')} {m['load']}",
                "unit": m["unit"],
                "source": m["source"],
            }
        )
    return out
