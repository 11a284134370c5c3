"""The speed questions: a GPU type's static views and roofline (``perf_for_gpu``, ``perf_report``: ``perf --json``),
one replica under a load and its capacity (``serve_report``: ``serve --json``), its latency against the request rate
(``serving_curve_report``: the load charts), and every GPU type as the plan runs it at the scenario's load
(``gpus_at_load``: the Performance page's per-GPU table). Re-exported by ``gpuplan_core.api``.

Every latency here is a sum of the same engine steps (``perf/steps.py``): under load the step loop's
(``perf/simulate.py``), in a static view the same steps for a batch that arrives at once.
"""

from __future__ import annotations

from typing import Any

from ..memory.request import memory_request
from ..perf.calibration import eager_regime
from ..perf.replica import DEFAULT_GPU
from ..perf.workload import workload_for
from ..results.perf import GpuAtLoad, GpuPerf, NoFit, PerfReport
from ..results.plan import Pick
from ..results.serving import ServeReport, ServingCurve, ServingResult
from ..scenario.fields import MAX_LAYOUT_GPUS
from ..scenario.scenario import Scenario
from ._shared import catalog_of, model_summary, scenario_of


def perf_for_gpu(sc: Scenario, gpu_name: str) -> GpuPerf | NoFit:
    """TTFT, TPOT, throughput and roofline data on one GPU type, at the scenario's layout when the
    model fits there, else at the smallest layout that fits (and the result says so). Where the serving engine
    cannot run the weights format on this GPU at all (the layout search refuses it too), no speed: why."""
    from ..hardware.catalog import get_gpu
    from ..hardware.engines import engine_gpu_problem
    from ..memory.fit import max_batch, min_gpus
    from ..perf.bands import perf_bands
    from ..perf.efficiency import PerfAssumptions
    from ..perf.predict import decode_sweep, predict

    m = sc.model()
    gpu = get_gpu(gpu_name)
    refused = engine_gpu_problem(sc.assumptions.engine, gpu, sc.formats.weights_format)
    if refused and sc.job.mode == "inference":
        return NoFit(gpu=gpu.gpu, notes=[refused[0].upper() + refused[1:] + "."])
    par = sc.parallelism
    ep = _serving_ep(sc)  # expert parallel set (the detail view of an EP pick): one rank of ep GPUs' replica
    at = dict(ep=ep, tp=1, pp=1, gpus=ep) if ep > 1 else dict(ep=None, tp=par.tp, pp=par.pp, gpus=par.gpus)
    req = memory_request(sc, **at)
    notes: list[str] = []
    tp, pp = at["tp"], at["pp"]
    mb = max_batch(m, req, gpu)
    if mb == 0:
        lay = min_gpus(m, req, gpu)
        if lay is not None:
            tp, pp = lay.tp, lay.pp
            req = req.model_copy(update={"tp": tp, "pp": pp, "gpus": tp * pp})
            mb = max_batch(m, req, gpu)
            notes.append(
                f"Does not fit at tp={sc.parallelism.tp} x pp={sc.parallelism.pp}; shown at the smallest fitting "
                f"layout tp={tp} x pp={pp}."
            )
        if lay is None or mb == 0:
            return NoFit(
                gpu=gpu.gpu, notes=[f"{m.name} does not fit on any layout of {gpu.gpu} up to {MAX_LAYOUT_GPUS:,} GPUs."]
            )
    batch = mb if sc.request.batch == "max" else sc.request.batch
    if batch > mb:
        notes.append(f"Batch {batch} needs more memory than {gpu.gpu} x{tp * pp} has at this context (max {mb}).")
    pa = PerfAssumptions()
    wl = workload_for(sc.formats, sc.assumptions, tp, pp, ep=ep, m=m)
    if ep > 1:
        notes.append(
            f"Expert parallel {ep} (attention data-parallel): these figures are one of the replica's {ep} ranks, a "
            f"GPU running its own batch of {max(1, batch):,} with 1/{ep} of the experts; the replica runs {ep} such "
            f"ranks at once, {ep} x the tokens per second."
        )
    engine = sc.assumptions.engine  # the serving engine's step model: its measured kernels where they exist
    r = predict(m, gpu, wl, max(1, batch), sc.request.input_tokens, sc.request.output_tokens, pa=pa, engine=engine)
    at_max = predict(
        m,
        gpu,
        wl,
        mb,
        sc.request.input_tokens,
        sc.request.output_tokens,
        pa=pa,
        with_compute_bound_batch=False,
        engine=engine,
    )
    bands = perf_bands(gpu.gpu, wl.weights_format, m.is_moe, eager_regime(engine), max(1, batch))
    static = dict(r)  # the static view's fields, as they are (GpuPerf is a StaticPerf with more)
    static["gpu_count"] = tp * pp * ep  # the replica's GPUs (an EP replica's ranks: ep)
    static["notes"] = notes + ([r.math_note] if r.math_note else []) + ([r.moe_note] if r.moe_note else []) + r.notes
    return GpuPerf(
        **static,
        error_band=bands,
        provenance={k: b.provenance for k, b in bands.items()},
        max_batch=mb,
        output_tokens_per_s_at_max_batch=at_max.output_tokens_per_s,
        decode_tokens_per_s_at_max_batch=at_max.decode_tokens_per_s,
        roofs={
            fmt: gpu.dense_peak_flops(fmt)[0]
            for fmt in ("bf16", "fp8", "fp4", "int8")
            if gpu.dense_peak_flops(fmt)[1] == fmt
        },
        sweep=decode_sweep(m, gpu, wl, sc.request.input_tokens + sc.request.output_tokens // 2, mb, pa, engine),
    )


def perf_report(s: Scenario | dict[str, Any], gpus: list[str] | None = None) -> PerfReport:
    """The scenario's GPU (default H100 SXM) as ``main`` (the JSON's top level), every requested GPU under ``gpus``."""
    from ..hardware.catalog import get_gpu

    sc = scenario_of(s)
    main_gpu = get_gpu(sc.parallelism.gpu).gpu if sc.parallelism.gpu else DEFAULT_GPU
    names = gpus if gpus is not None else ([main_gpu] if sc.parallelism.gpu else [g.gpu for g in catalog_of(sc)])
    per = [perf_for_gpu(sc, n) for n in names]
    main = next((p for p in per if p.gpu == main_gpu), None) or perf_for_gpu(sc, main_gpu)
    return PerfReport(**model_summary(sc).model_dump(), main=main, gpus=per)


def _serving_bands(moe: bool, gpu: str | None = None) -> dict[str, Any]:
    from ..perf.bands import serving_bands

    bands = serving_bands(moe, gpu)
    return {"error_band": bands, "provenance": {k: b.provenance for k, b in bands.items()}}


def serve_report(
    s: Scenario | dict[str, Any],
    concurrency: int | None = None,
    request_rate: float | None = None,
    gpu: str | None = None,
) -> ServeReport:
    """One replica of the scenario on its GPU under a load (``concurrency`` clients or ``request_rate`` requests
    per second), with its capacity under the scenario's targets and the replicas its traffic needs."""
    from ..perf.replica import replica_for
    from ..perf.serving import capacity, serve, shape_for
    from ..plan.replica_runs import SharedSim

    sc = scenario_of(s)
    r, note = replica_for(sc, gpu)
    sim = SharedSim(r, shape_for(sc.traffic))  # the layout search's runs of this replica, reused
    res = serve(r, concurrency=concurrency, request_rate=request_rate, steps=sim)
    if note:
        res = res.model_copy(update={"notes": [note, *res.notes]})
    out: dict[str, Any] = {
        **model_summary(sc).model_dump(),
        "gpu": r.gpu.gpu,
        "tp": r.wl.tp,
        "pp": r.wl.pp,
        "input_tokens": r.input_tokens,
        "output_tokens": r.output_tokens,
        "max_num_batched_tokens": r.limits.max_num_batched_tokens,
        "max_num_seqs": r.limits.max_num_seqs,
        "at_load": res,
        "max_requests_per_s": sim.max_rate(),
        **_serving_bands(r.m.is_moe, r.gpu.gpu),
    }
    if sc.traffic.ttft_target_s or sc.traffic.tpot_target_s:
        cap = capacity(r, sc.traffic.ttft_target_s, sc.traffic.tpot_target_s, steps=sim)
        out["capacity_requests_per_s"] = cap
        if sc.traffic.requests_per_day:
            peak = sc.traffic.peak_requests_per_s
            out["peak_requests_per_s"] = peak
            out["replicas"] = _replicas(sc, r.wl.tp * r.wl.pp, cap) if cap else None
    return ServeReport(**out)


def _serving_ep(sc: Scenario) -> int:
    """The expert-parallel degree the detail views run a serving replica at: the scenario's where serving honours
    it (``Parallelism.serving_ep``: an EP pick's detail scenario sets it), else 1 (tensor parallel)."""
    return (sc.parallelism.serving_ep(sc.model()) or 1) if sc.job.mode == "inference" else 1


def _replica_of_ranks(res: ServingResult, ep: int) -> ServingResult:
    """An expert-parallel replica's figures at a load from one rank's at 1 / ep of it (the ranks run the same mix:
    plan/capacity.ranks): request rates, throughput and sequences x ep, latencies the rank's."""
    if ep == 1:
        return res
    rate = res.load * ep if res.load_kind == "request_rate" else res.load
    scaled = ("output_tokens_per_s", "requests_per_s", "running_sequences", "waiting_requests")
    update = {k: getattr(res, k) * ep for k in scaled}
    return res.model_copy(update=update | {"load": rate, "max_running_sequences": res.max_running_sequences * ep})


def _replicas(sc: Scenario, replica_gpus: int, capacity_per_s: float) -> int:
    """The replicas the traffic's peak needs at this capacity, and at least those the GPU count set holds (as the
    layout search's ``served``)."""
    from ..pricing.billing import replicas_for_traffic, replicas_held

    need = replicas_for_traffic(sc.traffic.requests_per_day, sc.traffic.peak_to_average, capacity_per_s)
    return max(need, replicas_held(sc.parallelism.gpus, replica_gpus))


def serving_curve_report(s: Scenario | dict[str, Any], gpu: str | None = None) -> ServingCurve:
    """TTFT and TPOT against the request rate for one replica on the scenario's GPU, its saturation rate, its
    capacity within the targets and the replicas the traffic needs (the Performance page's chart)."""
    from ..perf.replica import replica_for
    from ..perf.serving import capacity, load_curve, shape_for
    from ..plan.replica_runs import SharedSim

    sc = scenario_of(s)
    ep = _serving_ep(sc)  # expert parallel: one rank simulated, the replica's rates ep x its (plan/capacity.ranks)
    r, note = replica_for(sc, gpu, ep=ep)
    targets = (sc.traffic.ttft_target_s, sc.traffic.tpot_target_s) if sc.job.serving == "interactive" else (None, None)
    sim = SharedSim(r, shape_for(sc.traffic))  # the layout search's runs of this replica, reused
    cap = capacity(r, *targets, steps=sim) * ep if any(targets) else None
    peak = sc.traffic.peak_requests_per_s if sc.traffic.requests_per_day else None
    limit = cap if cap is not None else 0.98 * sim.max_rate() * ep
    return ServingCurve(
        gpu=r.gpu.gpu,
        tp=r.wl.tp,
        pp=r.wl.pp,
        ep=ep,
        max_running_sequences=r.max_running * ep,
        max_requests_per_s=sim.max_rate() * ep,
        capacity_requests_per_s=cap,
        ttft_target_s=targets[0],
        tpot_target_s=targets[1],
        peak_requests_per_s=peak,
        replicas=_replicas(sc, r.wl.tp * r.wl.pp * ep, limit) if peak and limit else None,
        points=[
            _replica_of_ranks(x, ep) for x in load_curve(r, steps=sim, capacity_rate=None if cap is None else cap / ep)
        ],
        notes=[note] if note else [],
        **_serving_bands(r.m.is_moe, r.gpu.gpu),
    )


def _at_load(p: Pick, is_pick: bool) -> GpuAtLoad:
    return GpuAtLoad(
        gpu=p.gpu,
        weights_format=p.weights_format,
        layout=p.layout,
        tp=p.tp,
        pp=p.pp,
        gpu_count=p.replica_gpus,
        replicas=p.replicas,
        ttft_s=p.ttft_s,
        tpot_s=p.tpot_s,
        requests_per_s_per_replica=p.requests_per_s_per_replica,
        monthly_usd=p.monthly_usd,
        meets_target=p.meets_target,
        misses=p.misses,
        offer_id=p.offer_id,
        is_pick=is_pick,
    )


def gpus_at_load(
    s: Scenario | dict[str, Any], offers, explore_formats: bool = False, answer=None
) -> tuple[list[GpuAtLoad], dict[str, str]]:
    """Every GPU type as the plan runs it at the scenario's load: the recommendation (plan/recommend.py) over that
    type's offers alone, its pick (the cheapest that meets the targets, else its cheapest near miss). The layouts are
    the ones the answer's search judged (the same evaluations, remembered), so the answer's GPU type reads the
    answer's pick. ``answer``: the scenario's answer for these offers, when the caller has it (its pick is that GPU
    type's row). Returns the rows, fastest first token first, and the GPU types without one with the reason."""
    from ..hardware.catalog import get_gpu
    from ..plan.recommend import recommend

    sc = scenario_of(s)
    pick = None if answer is None else answer.pick
    by_gpu: dict[str, list] = {}
    for o in offers:
        by_gpu.setdefault(get_gpu(o.gpu).gpu, []).append(o)
    rows, missing = [], {}
    for g in catalog_of(sc):
        if pick is not None and g.gpu == pick.gpu:
            rows.append(_at_load(pick, True))
            continue
        own = by_gpu.get(g.gpu)
        if not own:
            missing[g.gpu] = "no offer in the price list"
            continue
        plan = recommend(sc, own, explore_formats=explore_formats, top=1)
        best = (plan.picks or plan.near_misses or [None])[0]
        if best is None or best.ttft_s is None:
            why = dict(plan.rejected[0]) if plan.rejected else {}  # a dict, or a typed Rejected (its fields)
            missing[g.gpu] = ": ".join(x for x in (why.get("layout"), why.get("reason")) if x) or "no layout runs it"
            continue
        rows.append(_at_load(best, False))
    rows.sort(key=lambda r: r.ttft_s)
    return rows, missing
