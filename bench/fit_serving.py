"""Fit the benchmark clients' first-token costs (perf/clients.py BENCH_CLIENTS) on the TRAINING rows of the
published serving measurements, and print the held-out error before and after. Prints figures; changes nothing.

    python bench/fit_serving.py
    python bench/fit_serving.py --write-loso   # every source left out in turn: data/serving_loso.csv
    python bench/fit_serving.py --gaps         # first-token gaps per source, from data/serving_loso.csv
    python bench/fit_serving.py --moe          # MoE runs: left-out predicted vs measured, and their step times
    python bench/fit_serving.py --steps        # each older release line's step factor (hardware/engines.py)

Each client's ``request_in_s`` (per engine it talked to) is fitted by ``serving_loso.fit_client_costs`` on the
training rows that ``serving_loso.fit_rows`` keeps: first-token rows of that client's sources at light load (a
closed loop of at most 4 clients, or at most 2 requests/s; online serving of dense and MoE models alike) with
prompts of at most 1,024 tokens in runs whose time per token is predicted within 25%, measured - predicted with no
client cost (the engine's own cost in), the median per source and then the median over the client's sources. Each
client's serving front end (``BenchClient.ingest``: seconds per request and per prompt token before a burst reaches
the engine) is fitted by
``serving_loso.fit_ingest`` on the first-token rows of its training bursts with that engine: the non-negative least
squares of (measured - predicted) / measured on (requests, prompt tokens) / measured. ``--write-loso``
refits both once per source on every OTHER source of the same client (and, for the three sources the stored MoE
constants were read on, those constants on every other source: gpuplan_core/perf/moe_loso.py) and stores that
source's predictions (gpuplan_core/perf/serving_loso.py), then prints the errors.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gpuplan_core.perf import serving_calibration as sc_cal  # noqa: E402
from gpuplan_core.perf.serving_errors import serving_summary  # noqa: E402


def summary(table, label):
    for s in serving_summary(table):
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


def steps() -> None:
    """Each release line's step factor (hardware/engines.py ``EngineRelease.step_time_factor``), read by
    serving_loso.fit_step_factors on the training rows of its saturated runs (dense bursts at fixed, stated
    lengths) with every step at the step model's time, beside the one stored; and per source, the factor it is
    predicted with when left out."""
    from gpuplan_core.hardware.engines import RELEASES
    from gpuplan_core.perf import serving_loso

    meta = sc_cal.load_serving_measurements().set_index("id")
    ones = serving_loso.step_fit_table()
    training = [r for r in ones if r["split"] == "training"]
    for key, (factor, sources, n) in serving_loso.fit_step_factors(training, meta).items():
        print(
            f"  {key[0]} {key[1]:<6} fitted {factor:.4f} on {n} training rows ({sources}); stored "
            f"{RELEASES[key].step_time_factor:.4f}"
        )
    lines = {(sc_cal.engine_of(m["engine"]), sc_cal.version_of(m)) for m in (meta.loc[r["id"]] for r in ones)}
    for source in sorted(
        {
            sc_cal.source_of(i)
            for i, m in meta.iterrows()
            if (sc_cal.engine_of(m["engine"]), sc_cal.version_of(m)) in lines
        }
    ):
        got = {k: round(v[0], 4) for k, v in serving_loso.fit_step_factors(ones, meta, source).items()}
        print(f"  {source} left out: {got or 'none (1.0)'}")


def gaps() -> None:
    """Why first-token time does not transfer between publishers, from the stored left-out-source predictions
    (each row's ``predicted_zero_cost`` is its run simulated with no client cost): per source and
    engine the light-load gap measured - predicted that the request cost is fitted on, and the online dense TTFT
    error with the left-out fitted client costs against the same runs with none."""
    import statistics

    from gpuplan_core.perf import serving_loso, serving_rows

    meta = sc_cal.load_serving_measurements().set_index("id")
    table = serving_loso.loso_table()
    rows = [r for r in table if r["metric"] == "ttft" and r["predicted_zero_cost"] is not None]
    run_of = {r["id"]: sc_cal.setup_key(meta.loc[r["id"]].to_dict() | {"id": r["id"]}) for r in table}
    step_s = {  # each run's predicted mean time per token (seconds): the engine step the gap is measured in
        run_of[r["id"]]: r["predicted"] / (1e3 if meta.loc[r["id"]]["unit"] == "ms" else 1.0)
        for r in table
        if r["metric"] == "itl" and r["statistic"] == "mean" and r["predicted"] is not None
    }
    by: dict[tuple[str, str], list[float]] = {}
    steps: dict[tuple[str, str], list[float]] = {}
    for r in rows:
        m = meta.loc[r["id"]]
        if r["regime"] in serving_loso.FIT_REGIMES and serving_rows.light_load(m) and int(m["input_tokens"]) <= 1024:
            scale = 1e3 if m["unit"] == "ms" else 1.0
            gap = (r["measured"] - r["predicted_zero_cost"]) / scale
            by.setdefault((r["source"], r["engine"]), []).append(gap)
            if r["statistic"] == "mean" and run_of[r["id"]] in step_s:
                steps.setdefault((r["source"], r["engine"]), []).append(gap / step_s[run_of[r["id"]]])
    print("light-load first-token gap (measured - predicted with no request cost), prompts <= 1,024 tokens, and in")
    print("decode steps (the run's predicted mean time per token; a gap that is a constant of the client stays in ms,")
    print("one of the engine's iteration stays in steps):")
    for (source, engine), g in sorted(by.items()):
        in_steps = steps.get((source, engine))
        extra = f"  {statistics.median(in_steps):5.2f} steps (n={len(in_steps)})" if in_steps else ""
        print(f"  {source:<22} {engine:<7} n={len(g):>3} median {statistics.median(g) * 1e3:7.1f} ms{extra}")
    online = [r for r in rows if r["regime"] == sc_cal.HEADLINE_REGIME and r["error"] is not None]
    fitted = statistics.median(abs(r["error"]) for r in online)
    zero = statistics.median(abs(r["predicted_zero_cost"] - r["measured"]) / r["measured"] for r in online)
    print(f"online dense TTFT, left-out-source costs: median |err| {fitted:.1%}; no request cost: {zero:.1%}")


def moe() -> None:
    """Where MoE first-token time goes wrong, from data/serving_loso.csv: per MoE run the left-out predicted and
    measured TTFT, time per token and output tokens/s, the prefill rate the measured TTFT implies for a closed loop
    of fixed lengths (its clients' prompts arrive together: clients x prompt / TTFT) against the step model's one
    prefill step of those prompts, and the step model's decode step at that batch."""
    from gpuplan_core.perf import serving_loso
    from gpuplan_core.perf.replica import replica_for
    from gpuplan_core.perf.roofline import decode_phase, prefill_phase
    from gpuplan_core.scenario.scenario import Scenario

    meta = sc_cal.load_serving_measurements().set_index("id")
    runs: dict[str, dict] = {}
    for r in serving_loso.loso_table():
        if r["model_class"] != "dense" and r["statistic"] in ("mean", "value"):
            m = meta.loc[r["id"]]
            key = sc_cal.setup_key(m.to_dict() | {"id": r["id"]})
            runs.setdefault(key, {"m": m, "source": r["source"]})[r["metric"]] = (r["measured"], r["predicted"])
    print(f"{'run':<58} {'TTFT ms meas/pred':>19} {'TPOT ms':>13} {'tok/s':>11} {'prefill tok/s':>19} {'step ms':>13}")
    for run in runs.values():
        m, c = run["m"], float(run["m"]["load"])
        if "ttft" not in run or math.isinf(c):
            continue
        sc = Scenario(
            preset=m["model_preset"],
            gpu=m["gpu"],
            tp=int(m["tensor_parallel"]),
            gpus=int(m["tensor_parallel"]),
            weights_format=sc_cal._format_of(m["weights_format"]),
            kv_format=sc_cal._format_of(m["kv_format"]),
            input_tokens=int(m["input_tokens"]),
            output_tokens=int(m["output_tokens"]),
            engine=sc_cal.engine_of(m["engine"]),
        )
        rep, _ = replica_for(sc)
        i, batch = int(m["input_tokens"]), int(c)
        pre = prefill_phase(rep.m, rep.gpu, rep.wl, batch, i, rep.pa)
        dec = decode_phase(rep.m, rep.gpu, rep.wl, batch, i + int(m["output_tokens"]) // 2, rep.pa)
        label = f"{run['source']} {m['engine']} {str(m['engine_version'])[:12]} {m['gpu']} c={batch}"
        cells = [
            f"{run[k][0]:>8.0f} /{run[k][1] or math.nan:>8.0f}" if k in run else f"{'':>18}"
            for k in ("ttft", "itl", "output_tokens_per_s")
        ]
        implied = batch * i / (run["ttft"][0] / 1e3)
        print(
            f"{label:<58} {cells[0]:>19} {cells[1]:>13} {cells[2]:>11} "
            f"{implied:>8.0f} /{batch * i / pre.time_s:>9.0f} {pre.time_s * 1e3:>6.0f}/{dec.time_s * 1e3:>5.1f}"
        )


def main() -> None:
    if "--moe" in sys.argv:
        moe()
        return
    if "--write-loso" in sys.argv:
        loso()
        return
    if "--gaps" in sys.argv:
        gaps()
        return
    if "--steps" in sys.argv:
        steps()
        return
    from gpuplan_core.perf import serving_loso

    meta = sc_cal.load_serving_measurements().set_index("id")
    summary(sc_cal.compute_serving_table(), "now")
    zero = sc_cal.compute_serving_table(client_costs={})
    summary(zero, "none")
    rows = serving_loso.fit_rows(zero, meta, keep=lambda r: r["split"] == "training")
    fitted = {}
    for (client, engine), (cost, _, n) in serving_loso.fit_client_costs(rows, serving_loso.CLIENT_KEYS).items():
        fitted[client, engine] = round(cost, 4)
        sources = sorted({r["source"] for r in rows if r["client"] == client and r["engine"] == engine})
        if n:
            print(f"{client} -> {engine}: {cost * 1e3:.1f} ms from {n} training rows ({sources})")
    zero = sc_cal.compute_serving_table(client_costs={}, ingests={})
    bursts = serving_loso.ingest_rows(zero, meta, keep=lambda r: r["split"] == "training")
    ingests = {}
    for (client, engine), (per_req, per_tok, how, n) in serving_loso.fit_ingest(
        bursts, serving_loso.INGEST_KEYS
    ).items():
        if n:
            ingests[client, engine] = (round(per_req, 4), round(per_tok, 7))
            what = f"front end {per_req * 1e3:.1f} ms/request + {per_tok * 1e6:.1f} us/token ({how}, {n} rows)"
            print(f"{client} -> {engine}: {what}")
    summary(sc_cal.compute_serving_table(client_costs=fitted, ingests=ingests), "fitted")


if __name__ == "__main__":
    main()
