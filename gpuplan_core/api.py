"""The public API: scenario in, plain JSON-able dicts out. Pages, the CLI and notebooks call these.

Every report is a dict whose keys are documented in the README ("JSON output"); byte counts are
integers of bytes, times are seconds, money is US dollars.
"""

from __future__ import annotations

from typing import Any

from .catalog import load_gpus
from .formats import get_format
from .memory import component_provenance, evaluate_catalog, memory_budget, model_weight_bytes
from .model import kv_bytes_per_token, params_active, params_total
from .reports import GpuFit, GpuPerf, Layout, MemoryReport, NoFit, PerfReport
from .scenario import Scenario
from .units import GB, GiB


def scenario_of(s: Scenario | dict[str, Any]) -> Scenario:
    return s if isinstance(s, Scenario) else Scenario(**{k: v for k, v in s.items() if v is not None})


def model_summary(sc: Scenario) -> dict[str, Any]:
    m = sc.model()
    kvf = get_format(sc.kv_format)
    return {
        "model": m.name,
        "model_source": m.source,
        "approximate": m.approximate,
        "params_total": params_total(m),
        "params_active": params_active(m),
        "kv_cache_bytes_per_token": kv_bytes_per_token(m, kvf.bytes_per_value),
        "layers": m.num_layers,
        "hidden_size": m.hidden_size,
        "attention_heads": m.num_attention_heads,
        "kv_heads": m.num_kv_heads,
        "head_dim": None if m.is_mla else m.d,
        "mla": m.is_mla,
        "moe_experts": m.num_experts,
        "max_context_tokens": m.max_context_tokens,
    }


def memory_report(s: Scenario | dict[str, Any]) -> MemoryReport:
    """Memory budget of the scenario's layout, and fit / min GPUs / max batch / max context per GPU."""
    sc = scenario_of(s)
    m = sc.model()
    req = sc.memory_request()
    budget = memory_budget(m, req)
    fits = evaluate_catalog(m, req, load_gpus())
    selected = {g.gpu for g in sc.selected_gpus()} if sc.gpu else set()
    return MemoryReport(
        **model_summary(sc),
        mode=req.mode,
        method=req.method,
        weights_format="nf4-dq" if req.mode != "inference" and req.method == "qlora" else req.weights_format,
        kv_format=req.kv_format,
        engine=req.engine,
        context_tokens=req.context_tokens,
        batch=req.batch,
        layout=Layout(gpus=req.gpus, tp=req.tp, pp=req.pp, dp=req.dp),
        scope=budget.scope,
        weights_bytes_total=round(
            model_weight_bytes(
                m, get_format("nf4-dq" if req.mode != "inference" and req.method == "qlora" else req.weights_format)
            )
        ),
        components={k: round(v) for k, v in budget.components.items()},
        provenance={k: component_provenance(k) for k in budget.components},
        offload=req.offload,
        offloaded={k: round(v) for k, v in budget.offloaded.items()},
        host_bytes_per_node=round(budget.host_bytes_per_node),
        budgets={k: round(v) for k, v in budget.budgets.items()},
        per_gpu_bytes=round(budget.per_gpu_bytes),
        total_bytes=round(budget.total_bytes),
        memory_utilization=req.assumptions.memory_utilization,
        notes=budget.notes,
        gpus=[
            GpuFit(
                gpu=f.gpu.gpu,
                label=f.gpu.label,
                selected=f.gpu.gpu in selected,
                vram_nominal_bytes=round(f.gpu.vram_nominal_bytes),
                vram_usable_bytes=round(f.gpu.vram_usable_bytes),
                budget_bytes=round(f.budget_bytes),
                fits=f.fits,
                min_gpus=f.min_gpus,
                min_layout=None if f.min_layout is None else Layout(**vars(f.min_layout)),
                max_batch=f.max_batch,
                max_context=f.max_context,
                kv_capacity_tokens=f.kv_capacity_tokens,
            )
            for f in fits
        ],
    )


def _gb(n: float) -> str:
    return f"{n / GB:,.2f} GB ({n / GiB:,.2f} GiB)"


def format_report(command: str, r: Any) -> str:
    """The CLI's text form of a report (read from its JSON form, the same keys the README documents)."""
    if isinstance(r, (MemoryReport, PerfReport)):
        r = r.model_dump()
    if command == "memory":
        lines = [
            f"{r['model']}: {r['params_total']:,} parameters ({r['params_active']:,} active)"
            + (" [approximate architecture]" if r["approximate"] else ""),
            f"KV cache: {r['kv_cache_bytes_per_token']:,.0f} bytes per token ({r['kv_format']})",
            f"{r['mode']} ({r['method']}), weights {r['weights_format']}, context {r['context_tokens']:,}, "
            f"batch {r['batch']}, layout {r['layout']}",
            f"Per-GPU budget, scope '{r['scope']}':",
        ]
        lines += [f"  {k:<28} {_gb(v)}   {r['provenance'][k].split(':')[0]}" for k, v in r["components"].items()]
        lines.append(f"  {'total per GPU':<28} {_gb(r['per_gpu_bytes'])}")
        if r["offloaded"]:
            lines += [f"  offloaded: {k:<17} {_gb(v)} per GPU, in host RAM" for k, v in r["offloaded"].items()]
            lines.append(f"  {'host RAM per machine':<28} {_gb(r['host_bytes_per_node'])}")
        lines.append(f"  {'total, all GPUs':<28} {_gb(r['total_bytes'])}")
        for scope, v in r["budgets"].items():
            lines.append(f"  scope '{scope}': {_gb(v)} per GPU")
        lines += [f"note: {n}" for n in r["notes"]]
        lines.append(f"{'GPU':<16} {'fits':<5} {'min GPUs':>8} {'max batch':>10} {'max context':>12}")
        for g in r["gpus"]:
            lines.append(
                f"{g['gpu']:<16} {'yes' if g['fits'] else 'no':<5} {g['min_gpus'] or '-':>8} "
                f"{g['max_batch']:>10,} {g['max_context']:>12,}"
            )
        return "\n".join(lines)
    if command == "perf":
        return _format_perf(r)
    if command == "cost":
        return _format_cost(r)
    if command == "plan":
        return _format_plan(r)
    if command == "serve":
        return _format_serve(r)
    return str(r)


# ---- performance ---------------------------------------------------------------------------------

DEFAULT_GPU = "H100-SXM"


def perf_for_gpu(sc: Scenario, gpu_name: str) -> GpuPerf | NoFit:
    """TTFT, TPOT, throughput and roofline data on one GPU type, at the scenario's layout when the
    model fits there, else at the smallest layout that fits (and the result says so)."""
    from .calibration import perf_bands
    from .catalog import get_gpu
    from .memory import max_batch, min_gpus
    from .perf import PerfAssumptions, decode_sweep, predict

    m = sc.model()
    gpu = get_gpu(gpu_name)
    req = sc.memory_request()
    notes: list[str] = []
    tp, pp = sc.tp, sc.pp
    mb = max_batch(m, req, gpu)
    if mb == 0:
        lay = min_gpus(m, req, gpu)
        if lay is not None:
            tp, pp = lay.tp, lay.pp
            req = req.model_copy(update={"tp": tp, "pp": pp, "gpus": tp * pp})
            mb = max_batch(m, req, gpu)
            notes.append(
                f"Does not fit at tp={sc.tp} x pp={sc.pp}; shown at the smallest fitting layout tp={tp} x pp={pp}."
            )
        if lay is None or mb == 0:
            return NoFit(gpu=gpu.gpu, notes=[f"{m.name} does not fit on any layout of {gpu.gpu} up to 4,096 GPUs."])
    batch = mb if sc.batch == "max" else sc.batch
    if batch > mb:
        notes.append(f"Batch {batch} needs more memory than {gpu.gpu} x{tp * pp} has at this context (max {mb}).")
    pa = PerfAssumptions()
    wl = sc.workload(tp, pp)
    r = predict(m, gpu, wl, max(1, batch), sc.input_tokens, sc.output_tokens, pa)
    at_max = predict(m, gpu, wl, mb, sc.input_tokens, sc.output_tokens, pa, with_compute_bound_batch=False)
    bands = perf_bands(gpu.gpu, wl.weights_format, m.is_moe, wl.eager, max(1, batch))
    d = r.to_dict()
    d.update(
        error_band=bands,
        provenance={k: b.provenance for k, b in bands.items()},
        max_batch=mb,
        output_tokens_per_s_at_max_batch=at_max.output_tokens_per_s,
        decode_tokens_per_s_at_max_batch=at_max.decode_tokens_per_s,
        notes=notes + ([r.math_note] if r.math_note else []) + ([r.moe_note] if r.moe_note else []) + r.notes,
        roofs={
            fmt: gpu.dense_peak_flops(fmt)[0]
            for fmt in ("bf16", "fp8", "fp4", "int8")
            if gpu.dense_peak_flops(fmt)[1] == fmt
        },
        sweep=decode_sweep(m, gpu, wl, sc.input_tokens + sc.output_tokens // 2, mb, pa),
    )
    return GpuPerf(**d)


def perf_report(s: Scenario | dict[str, Any], gpus: list[str] | None = None) -> PerfReport:
    """The scenario's GPU (default H100 SXM) as ``main`` (the JSON's top level), every requested GPU under ``gpus``."""
    sc = scenario_of(s)
    from .catalog import get_gpu

    main_gpu = get_gpu(sc.gpu).gpu if sc.gpu else DEFAULT_GPU
    names = gpus if gpus is not None else ([main_gpu] if sc.gpu else [g.gpu for g in load_gpus()])
    per = [perf_for_gpu(sc, n) for n in names]
    main = next((p for p in per if p.gpu == main_gpu), None) or perf_for_gpu(sc, main_gpu)
    return PerfReport(**model_summary(sc), main=main, gpus=per)


def calibration_report() -> dict[str, Any]:
    from .calibration import (
        HEADLINE_REGIME,
        SERVING_REGIMES,
        calibration_table,
        median_abs_error,
        regime_summary,
        serving_median_abs_error,
        serving_summary,
        serving_table,
    )

    table = calibration_table()
    serving = serving_table()
    return {
        "points": table,
        "median_abs_error": median_abs_error(table),
        "median_abs_error_speed_only": median_abs_error(table, exclude_memory=True),
        "regimes": regime_summary(),
        "serving_points": serving,
        "serving_median_abs_error": serving_median_abs_error(serving, HEADLINE_REGIME),
        "serving_headline_regime": HEADLINE_REGIME,
        "serving_regimes": SERVING_REGIMES,
        "serving_summary": serving_summary(serving),
        "serving_predicted_saturated": [p["id"] for p in serving if p["predicted_saturated"]],
    }


def calibration_markdown(r: dict[str, Any]) -> str:
    """The error per regime as a Markdown table (the README's, which a test holds the model to)."""
    lines = [
        f"Overall: **median absolute error {r['median_abs_error']:.1%}** over {len(r['points'])} published "
        "measurements (single requests and static batches).",
        "",
        "| regime (GPU generation · weights format · phase) | measurements | median absolute error | bias |",
        "|---|---|---|---|",
    ]
    measured = [g for g in r["regimes"] if g["points"]]
    lines += [
        f"| {g['regime']} | {g['points']} | {g['median_abs_error']:.1%} | {g['median_error']:+.1%} |" for g in measured
    ]
    empty = [g["regime"] for g in r["regimes"] if not g["points"]]
    lines += ["", f"No measurement yet ({len(empty)} regimes, shown as roofline estimates): " + ", ".join(empty) + "."]
    return "\n".join(lines)


def format_calibration(r: dict[str, Any]) -> str:
    lines = [f"{'id':<34} {'regime':<40} {'metric':<26} {'measured':>10} {'predicted':>10} {'error':>8}"]
    for p in r["points"]:
        lines.append(
            f"{p['id'][:34]:<34} {p['regime']:<40} {p['metric']:<26} {p['measured']:>10,.1f} {p['predicted']:>10,.1f} "
            f"{p['error'] * 100:>7.1f}%"
        )
    lines.append(
        f"single requests and static batches: median absolute error {r['median_abs_error'] * 100:.1f}% over "
        f"{len(r['points'])} points (speed points only: {r['median_abs_error_speed_only'] * 100:.1f}%)"
    )
    lines += ["", "by regime:", *(f"  {g['regime']:<52} {g['points']:>4} points, median |error| "
              f"{g['median_abs_error'] * 100:5.1f}%, bias {g['median_error'] * 100:+6.1f}%"
              for g in r["regimes"] if g["points"])]  # fmt: skip
    lines.append("")
    lines.append(f"serving under load ({len(r['serving_points'])} published points, data/serving_measurements.csv):")
    lines.append(f"{'regime':<28} {'metric':<20} {'points':>6} {'median |err|':>12} {'median err':>11}")
    for s in r["serving_summary"]:
        lines.append(
            f"{s['regime']:<28} {s['metric']:<20} {s['points']:>6} {s['median_abs_error'] * 100:>11.1f}% "
            f"{s['median_error'] * 100:>+10.1f}%"
        )
    lines.append(
        f"headline ({r['serving_headline_regime']}): median absolute error {r['serving_median_abs_error'] * 100:.1f}%; "
        f"{len(r['serving_predicted_saturated'])} points predicted beyond one replica: "
        + ", ".join(r["serving_predicted_saturated"])
    )
    return "\n".join(lines)


def _format_perf(r: dict[str, Any]) -> str:
    if not r.get("fits", True) and "ttft_s" not in r:
        return "\n".join(r["notes"])
    band = {k: f"   {v['short']}" for k, v in r.get("error_band", {}).items()}
    lines = [
        f"{r['model']} on {r['gpu']} x{r['gpu_count']} (tp {r['tp']}, pp {r['pp']}), math {r['math_format']}, "
        f"batch {r['batch']} (max {r['max_batch']}), prompt {r['prompt_tokens']:,}, output {r['output_tokens']:,}",
        f"  TTFT                          {r['ttft_s'] * 1e3:,.1f} ms{band.get('ttft_s', '')}",
        f"  TPOT (excl. first token)      {r['tpot_s'] * 1e3:,.2f} ms{band.get('tpot_s', '')}",
        f"  TPOT (incl. first token)      {r['tpot_inclusive_s'] * 1e3:,.2f} ms",
        f"  decode tokens/s per sequence  {r['decode_tokens_per_s_per_sequence']:,.1f}",
        f"  decode tokens/s, all          {r['decode_tokens_per_s']:,.1f}",
        f"  output tokens/s (end to end)  {r['output_tokens_per_s']:,.1f}{band.get('output_tokens_per_s', '')}",
        f"  prefill tokens/s              {r['prefill_tokens_per_s']:,.0f}",
        f"  ridge point                   {r['ridge_flops_per_byte']:,.1f} FLOP/byte",
        f"  decode weight matmuls turn compute-bound at batch {r['compute_bound_batch']}",
    ]
    for ph in ("prefill", "decode"):
        p = r[ph]
        lines.append(
            f"  {ph:<8} {p['flops'] / 1e12:,.3f} TFLOP, {p['bytes'] / 1e9:,.3f} GB, intensity "
            f"{p['intensity_flops_per_byte']:,.1f} FLOP/B, {p['bound']}-bound, MFU {p['mfu']:.2f}, MBU {p['mbu']:.2f}"
        )
    named = {"ttft_s": "TTFT", "tpot_s": "TPOT", "output_tokens_per_s": "throughput"}
    lines += [f"error band, {name}: {r['error_band'][k]['text']}" for k, name in named.items() if "error_band" in r]
    lines += [f"note: {n}" for n in r["notes"]]
    return "\n".join(lines)


# ---- cost and plan -------------------------------------------------------------------------------


def _offers(pricing_path: str | None):
    from .pricing import load_pricing

    report = load_pricing(pricing_path)
    if not report.offers:
        raise ValueError("pricing: no usable offers; " + "; ".join(str(e) for e in report.errors[:5]))
    return report


def cost_report(
    s: Scenario | dict[str, Any], pricing_path: str | None = None, offers=None, fixed_layout: bool = False
) -> dict[str, Any]:
    """Per offer: per-run cluster cost and monthly always-on; training: GPU-hours and wall hours."""
    from .plan import cost_table

    sc = scenario_of(s)
    report = None
    if offers is None:
        report = _offers(pricing_path)
        offers = report.offers
    table = cost_table(sc, offers, fixed_layout)
    rows = table["offers"]
    if sc.gpu:
        from .catalog import get_gpu

        gid = get_gpu(sc.gpu).gpu
        rows = [r for r in rows if r["gpu"] == gid]
    rows.sort(key=lambda r: r["run_cost_usd"] if r["run_cost_usd"] is not None else float("inf"))
    out: dict[str, Any] = {
        **model_summary(sc),
        "mode": sc.mode,
        "hours_per_month": sc.hours_per_month,
        "offers": rows,
        "rejected": table["rejected"],
        "serverless": table.get("serverless", []),
    }
    if sc.mode != "inference":
        first = rows[0] if rows else None
        out.update(
            training_flops=table.get("training_flops"),
            training_tokens=table.get("training_tokens"),
            mfu=table.get("mfu"),
            tokens_note=table.get("tokens_note"),
            gpu_hours=None if first is None else first["gpu_hours"],
            wall_hours=None if first is None else first["wall_hours"],
        )
    else:
        first = rows[0] if rows else None
        out.update(
            gpu_hours=None,
            wall_hours=None,
            cheapest_monthly_usd=None if not rows else min(r["monthly_always_on_usd"] for r in rows),
        )
    if report is not None:
        out["pricing_errors"] = [str(e) for e in report.errors]
        out["pricing_warnings"] = [str(w) for w in report.warnings]
    return out


def plan_report(
    s: Scenario | dict[str, Any], pricing_path: str | None = None, offers=None, explore_formats: bool = False
):
    """The recommendation as a typed Plan (plan.py); the CLI's JSON is its model_dump()."""
    from .plan import recommend

    sc = scenario_of(s)
    if offers is None:
        offers = _offers(pricing_path).offers
    return recommend(sc, offers, explore_formats=explore_formats)


def _format_cost(r: dict[str, Any]) -> str:
    lines = [f"{r['model']} ({r['mode']}): {len(r['offers'])} offers"]
    if r.get("gpu_hours"):
        lines.append(
            f"  training: {r['training_flops']:.3g} FLOPs, {r['gpu_hours']:,.0f} GPU-hours, "
            f"{r['wall_hours']:,.1f} h wall (cheapest offer's layout), MFU {r['mfu']:.2f}"
        )
        if r.get("tokens_note"):
            lines.append(f"  note: {r['tokens_note']}")
    lines.append(f"  {'offer':<36} {'GPU':<14} {'billing':<17} {'GPUs':>5} {'per run USD':>12} {'monthly USD':>12}")
    for o in r["offers"][:40]:
        lines.append(
            f"  {o['offer_id']:<36} {o['gpu']:<14} {o['billing_model']:<17} {o['gpus']:>5} "
            f"{o['run_cost_usd']:>12,.2f} {o['monthly_always_on_usd']:>12,.0f}"
        )
    for o in r.get("serverless", [])[:20]:
        lines.append(
            f"  {o['offer_id']:<36} {o['gpu']:<14} {o['billing_model']:<17} {o['replicas']:>5} "
            f"{'-':>12} {o['monthly_usd']:>12,.0f}  (serverless: workers, monthly)"
        )
    for rej in r["rejected"][:10]:
        lines.append(f"  not possible: {rej}")
    return "\n".join(lines)


def _format_plan(plan) -> str:
    lines = [f"{plan.model} ({plan.mode}), {plan.candidates} candidates; cost in {plan.unit}"]
    if plan.message:
        lines.append(plan.message)
    for i, p in enumerate(plan.picks, 1):
        cost = p.monthly_usd if p.monthly_usd is not None else p.run_cost_usd
        lines.append(f"{i}. {p.offer_id} ({p.layout}, {p.replicas} replica(s), {p.weights_format}): {cost:,.0f} USD")
        lines += [f"     - {w}" for w in p.why]
        if p.ttft_s is not None:
            tpot = "" if p.tpot_s is None else f", TPOT {p.tpot_s * 1e3:,.1f} ms"
            lines.append(f"     - predicted TTFT {p.ttft_s * 1e3:,.0f} ms{tpot}; error band: {p.error_band}")
    if plan.why:
        lines.append("why: " + " -> ".join(f"{w.label} {w.value}" for w in plan.why))
    for p in plan.near_misses:
        cost = p.monthly_usd if p.monthly_usd is not None else p.run_cost_usd
        lines.append(
            f"near miss: {p.offer_id} ({p.layout}, {p.weights_format}) {cost:,.0f} USD misses: " + "; ".join(p.misses)
        )
    return "\n".join(lines)


# ---- serving under traffic ------------------------------------------------------------------------


def _add_serving_bands(out: dict[str, Any], moe: bool) -> None:
    from .calibration import serving_bands

    bands = serving_bands(moe)
    out["error_band"] = {k: b.to_dict() for k, b in bands.items()}
    out["provenance"] = {k: b.provenance for k, b in bands.items()}


def serve_report(
    s: Scenario | dict[str, Any],
    concurrency: int | None = None,
    request_rate: float | None = None,
    gpu: str | None = None,
) -> dict[str, Any]:
    """One replica of the scenario on its GPU under a load (``concurrency`` clients or ``request_rate`` requests
    per second), with its capacity under the scenario's targets and the replicas its traffic needs."""
    from .serving import capacity, max_request_rate, replica_for, serve

    sc = scenario_of(s)
    r, note = replica_for(sc, gpu)
    res = serve(r, concurrency=concurrency, request_rate=request_rate)
    out: dict[str, Any] = {
        **model_summary(sc),
        "gpu": r.gpu.gpu,
        "tp": r.wl.tp,
        "pp": r.wl.pp,
        "input_tokens": r.input_tokens,
        "output_tokens": r.output_tokens,
        "max_num_batched_tokens": r.limits.max_num_batched_tokens,
        "max_num_seqs": r.limits.max_num_seqs,
        **res.model_dump(),
        "max_requests_per_s": max_request_rate(r),
    }
    if note:
        out["notes"] = [note, *out["notes"]]
    _add_serving_bands(out, r.m.is_moe)
    if sc.ttft_target_s or sc.tpot_target_s:
        cap = capacity(r, sc.ttft_target_s, sc.tpot_target_s)
        out["capacity_requests_per_s"] = cap
        if sc.requests_per_day:
            from .cost import replicas_for_traffic

            peak = sc.requests_per_day / 86_400 * sc.peak_to_average
            out["peak_requests_per_s"] = peak
            out["replicas"] = replicas_for_traffic(sc.requests_per_day, sc.peak_to_average, cap) if cap else None
    return out


def _format_serve(r: dict[str, Any]) -> str:
    head = (
        f"{r['model']} on {r['gpu']} (tp {r['tp']}, pp {r['pp']}), {r['input_tokens']:,} input + "
        f"{r['output_tokens']:,} output tokens, {r['load_kind'].replace('_', ' ')} {r['load']:g}"
    )
    if r["saturated"]:
        lines = [head, f"SATURATED: more than one replica serves (it saturates at {r['max_requests_per_s']:.2f} req/s)"]
    else:
        lines = [
            head,
            f"TTFT      mean {r['ttft_mean_s'] * 1e3:,.0f} ms, p50 {r['ttft_p50_s'] * 1e3:,.0f} ms, "
            f"p95 {r['ttft_p95_s'] * 1e3:,.0f} ms",
            f"TPOT      mean {(r['tpot_mean_s'] or 0) * 1e3:,.1f} ms, p50 {(r['tpot_p50_s'] or 0) * 1e3:,.1f} ms",
            f"E2E       mean {r['e2e_mean_s']:,.2f} s",
            f"through   {r['requests_per_s']:,.2f} req/s, {r['output_tokens_per_s']:,.0f} output tok/s, "
            f"{r['running_sequences']:,.1f} sequences running (at most {r['max_running_sequences']:,})",
        ]
    if "error_band" in r and not r["saturated"]:
        bands = r["error_band"]
        lines += [f"error band, {n}: {bands[k]['text']}" for k, n in (("ttft_mean_s", "TTFT"), ("tpot_mean_s", "TPOT"))]
    if "capacity_requests_per_s" in r:
        lines.append(f"capacity  {r['capacity_requests_per_s']:,.2f} req/s within the targets")
    if r.get("replicas"):
        lines.append(f"replicas  {r['replicas']} for a peak of {r['peak_requests_per_s']:,.2f} req/s")
    return "\n".join(lines + [f"note: {n}" for n in r["notes"]])


def serving_curve_report(s: Scenario | dict[str, Any], gpu: str | None = None) -> dict[str, Any]:
    """TTFT and TPOT against the request rate for one replica on the scenario's GPU, its saturation rate, its
    capacity within the targets and the replicas the traffic needs (the Performance page's chart)."""
    from .cost import replicas_for_traffic
    from .serving import capacity, load_curve, max_request_rate, replica_for

    sc = scenario_of(s)
    r, note = replica_for(sc, gpu)
    targets = (sc.ttft_target_s, sc.tpot_target_s) if sc.serving == "interactive" else (None, None)
    cap = capacity(r, *targets) if any(targets) else None
    peak = sc.requests_per_day / 86_400 * sc.peak_to_average if sc.requests_per_day else None
    limit = cap if cap is not None else 0.99 * max_request_rate(r)
    out = {
        "gpu": r.gpu.gpu,
        "tp": r.wl.tp,
        "pp": r.wl.pp,
        "max_running_sequences": r.max_running,
        "max_requests_per_s": max_request_rate(r),
        "capacity_requests_per_s": cap,
        "ttft_target_s": targets[0],
        "tpot_target_s": targets[1],
        "peak_requests_per_s": peak,
        "replicas": replicas_for_traffic(sc.requests_per_day, sc.peak_to_average, limit) if peak and limit else None,
        "points": [p.model_dump() for p in load_curve(r)],
        "notes": [note] if note else [],
    }
    _add_serving_bands(out, r.m.is_moe)
    return out
