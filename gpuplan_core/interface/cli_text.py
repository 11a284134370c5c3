"""The command line's text output: each report as people read it in a terminal (the JSON form is the report's
``model_dump()``; this module only lays it out, reading the reports' fields)."""

from __future__ import annotations

from ..common.text import counted
from ..common.units import GB, GiB
from ..report.calibration import CalibrationReport
from ..report.deployment import DeploymentCalibration
from ..results.cost import CostReport
from ..results.memory import MemoryReport
from ..results.perf import GpuPerf, NoFit, PerfReport
from ..results.serving import ServeReport


def _gb(n: float) -> str:
    return f"{n / GB:,.2f} GB ({n / GiB:,.2f} GiB)"


def format_report(command: str, r) -> str:
    """The CLI's text form of a report."""
    if command == "memory":
        return _format_memory(r)
    if command == "perf":
        return _format_perf(r)
    if command == "cost":
        return _format_cost(r)
    if command == "plan":
        return _format_plan(r)
    if command == "serve":
        return _format_serve(r)
    return str(r)


def _format_memory(r: MemoryReport) -> str:
    lines = [
        f"{r.model}: {r.params_total:,} parameters ({r.params_active:,} active)"
        + (" [approximate architecture]" if r.approximate else ""),
        f"KV cache: {r.kv_cache_bytes_per_token:,.0f} bytes per token ({r.kv_format})",
        f"{r.mode} ({r.method}), weights {r.weights_format}, context {r.context_tokens:,}, batch {r.batch}, layout "
        f"{r.layout.gpus:,} GPUs, {r.layout.text}",
        f"Per-GPU budget, scope '{r.scope}':",
    ]
    lines += [f"  {k:<28} {_gb(v)}   {r.provenance[k].split(':')[0]}" for k, v in r.components.items()]
    lines.append(f"  {'total per GPU':<28} {_gb(r.per_gpu_bytes)}")
    if r.offloaded:
        lines += [f"  offloaded: {k:<17} {_gb(v)} per GPU, in host RAM" for k, v in r.offloaded.items()]
        lines.append(f"  {'host RAM per machine':<28} {_gb(r.host_bytes_per_node)}")
    lines.append(f"  {'total, all GPUs':<28} {_gb(r.total_bytes)}")
    lines += [f"  scope '{scope}': {_gb(v)} per GPU" for scope, v in r.budgets.items()]
    lines += [f"note: {n}" for n in r.notes]
    lines.append(f"{'GPU':<16} {'fits':<5} {'min GPUs':>8} {'max batch':>10} {'max context':>12}")
    lines += [
        f"{g.gpu:<16} {'yes' if g.fits else 'no':<5} {g.min_gpus or '-':>8} {g.max_batch:>10,} {g.max_context:>12,}"
        for g in r.gpus
    ]
    return "\n".join(lines)


def calibration_markdown(r: CalibrationReport) -> str:
    """The error per regime as a Markdown table (the README's, which a test holds the model to)."""
    lines = [
        f"Overall: **median absolute error {r.median_abs_error:.1%}** over {len(r.points)} published "
        "measurements (single requests and static batches).",
        "",
        "| regime (GPU generation · weights format · phase) | measurements | median absolute error | bias |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {g.regime} | {g.points} | {g.median_abs_error:.1%} | {g.median_error:+.1%} |" for g in r.measured_regimes
    ]
    empty = [g.regime for g in r.regimes if not g.points]
    lines += ["", f"No measurement yet ({len(empty)} regimes, shown as roofline estimates): " + ", ".join(empty) + "."]
    return "\n".join(lines)


def format_calibration(r: CalibrationReport) -> str:
    lines = [f"{'id':<34} {'regime':<40} {'metric':<26} {'measured':>10} {'predicted':>10} {'error':>8}"]
    lines += [
        f"{p.id[:34]:<34} {p.regime:<40} {p.metric:<26} {p.measured:>10,.1f} {p.predicted:>10,.1f} "
        f"{p.error * 100:>7.1f}%"
        for p in r.points
    ]
    lines.append(
        f"single requests and static batches: median absolute error {r.median_abs_error * 100:.1f}% over "
        f"{len(r.points)} points (speed points only: {r.median_abs_error_speed_only * 100:.1f}%)"
    )
    lines += ["", "by regime:"]
    lines += [
        f"  {g.regime:<52} {g.points:>4} points, median |error| {g.median_abs_error * 100:5.1f}%, bias "
        f"{g.median_error * 100:+6.1f}%"
        for g in r.measured_regimes
    ]
    lines.append("")
    lines.append(f"serving under load ({len(r.serving_points)} published points, data/serving_measurements.csv):")
    lines.append(f"{'regime':<28} {'metric':<20} {'points':>6} {'median |err|':>12} {'median err':>11}")
    lines += [
        f"{s.regime:<28} {s.metric:<20} {s.points:>6} {s.median_abs_error * 100:>11.1f}% "
        f"{s.median_error * 100:>+10.1f}%"
        for s in r.serving_summary
    ]
    lines.append(
        f"headline ({r.serving_headline_regime}): median absolute error {r.serving_median_abs_error * 100:.1f}%; "
        f"{len(r.serving_predicted_saturated)} points predicted beyond one replica: "
        + ", ".join(r.serving_predicted_saturated)
    )
    return "\n".join(lines)


def _cell(v: float | None) -> str:
    return "-" if v is None else f"{v:,.1f}"


def format_deployment(r: DeploymentCalibration) -> str:
    """calibrate --from FILE: each run predicted vs measured, the median errors, the fitted constants."""
    lines = [f"{r.name} ({r.file_format}, {r.runs_read} runs)", *r.notes, ""]
    head = f"{'run':>3} {'load':<14} {'metric':<16} {'measured':>10} {'defaults':>10} {'fitted':>10} {'held out':>10}"
    lines.append(head)
    lines += [
        f"{x['run']:>3} {x['load']:<14} {x['metric']:<16} {_cell(x['measured']):>10} {_cell(x['before']):>10} "
        f"{_cell(x['fitted']):>10} {_cell(x['held_out']):>10}"
        for x in r.run_rows()
    ]
    lines += ["", "median |error|:"]
    for row in r.error_rows():
        lines.append("  " + "  ".join(f"{k}: {v:.1f}" if isinstance(v, float) else f"{k}: {v}" for k, v in row.items()))
    fit = r.fit
    if fit and r.profile:
        factor = "identified" if fit.factor_identified else "not identified (fewer than 2 runs state a TPOT): 1"
        lines += [
            "",
            f"fitted: request_in_s = {fit.request_in_s * 1e3:.1f} ms (from {fit.cost_fit_from} runs), "
            f"decode_time_factor = {fit.decode_time_factor:.3f} ({factor})",
            f"use it: --request-in-s {r.profile.request_in_s:g} --decode-time-factor {r.profile.decode_time_factor:g}",
        ]
    return "\n".join(lines)


def _format_perf(report: PerfReport) -> str:
    r: GpuPerf | NoFit = report.main
    if not r.fits:
        return "\n".join(r.notes)
    band = {k: f"   {v.short}" for k, v in r.error_band}
    lines = [
        f"{report.model} on {r.gpu} x{r.gpu_count} (tp {r.tp}, pp {r.pp}), math {r.math_format}, "
        f"batch {r.batch} (max {r.max_batch}), prompt {r.prompt_tokens:,}, output {r.output_tokens:,}",
        f"  TTFT                          {r.ttft_s * 1e3:,.1f} ms{band.get('ttft_s', '')}",
        f"  TPOT (excl. first token)      {r.tpot_s * 1e3:,.2f} ms{band.get('tpot_s', '')}",
        f"  TPOT (incl. first token)      {r.tpot_inclusive_s * 1e3:,.2f} ms",
        f"  decode tokens/s per sequence  {r.decode_tokens_per_s_per_sequence:,.1f}",
        f"  decode tokens/s, all          {r.decode_tokens_per_s:,.1f}",
        f"  output tokens/s (end to end)  {r.output_tokens_per_s:,.1f}{band.get('output_tokens_per_s', '')}",
        f"  prefill tokens/s              {r.prefill_tokens_per_s:,.0f}",
        f"  ridge point                   {r.ridge_flops_per_byte:,.1f} FLOP/byte",
        f"  decode weight matmuls turn compute-bound at batch {r.compute_bound_batch}",
    ]
    for p in (r.prefill, r.decode):
        lines.append(
            f"  {p.name:<8} {p.flops / 1e12:,.3f} TFLOP, {p.bytes / 1e9:,.3f} GB, intensity "
            f"{p.intensity_flops_per_byte:,.1f} FLOP/B, {p.bound}-bound, MFU {p.mfu:.2f}, MBU {p.mbu:.2f}"
        )
    named = {"ttft_s": "TTFT", "tpot_s": "TPOT", "output_tokens_per_s": "throughput"}
    lines += [f"error band, {name}: {getattr(r.error_band, k).text}" for k, name in named.items()]
    lines += [f"note: {n}" for n in r.notes]
    return "\n".join(lines)


def _format_cost(r: CostReport) -> str:
    lines = [f"{r.model} ({r.mode}): {len(r.offers)} offers"]
    if r.gpu_hours:
        lines.append(
            f"  training: {r.training_flops:.3g} FLOPs, {r.gpu_hours:,.0f} GPU-hours, "
            f"{r.wall_hours:,.1f} h wall (cheapest offer's layout), MFU {r.mfu:.2f}"
        )
        if r.tokens_note:
            lines.append(f"  note: {r.tokens_note}")
    lines.append(f"  {'offer':<36} {'GPU':<14} {'billing':<17} {'GPUs':>5} {'per run USD':>12} {'monthly USD':>12}")
    lines += [
        f"  {o.offer_id:<36} {o.gpu:<14} {o.billing_model:<17} {o.gpus:>5} "
        f"{o.run_cost_usd:>12,.2f} {o.monthly_always_on_usd:>12,.0f}"
        for o in r.offers[:40]
    ]
    lines += [
        f"  {o.offer_id:<36} {o.gpu:<14} {o.billing_model:<17} {o.replicas:>5} "
        f"{'-':>12} {o.monthly_usd:>12,.0f}  (serverless: workers, monthly)"
        for o in r.serverless[:20]
    ]
    lines += [f"  not possible: {rej.model_dump()}" for rej in r.rejected[:10]]
    return "\n".join(lines)


def _format_plan(ans) -> str:
    """The one answer (plan/answer.py): its pick first, then the ranked plan behind it."""
    plan = ans.plan
    lines = [f"{plan.model} ({plan.mode}), {plan.candidates} candidates; cost in {plan.unit}"]
    if ans.pick is not None:
        lines.append(
            f"answer: {ans.pick.offer_id} ({ans.pick.layout}, {counted(ans.pick.replicas, 'replica')}) "
            f"{ans.cost_usd:,.0f} USD per {ans.cost_per}; memory per GPU {_gb(ans.memory_per_gpu_bytes)} at "
            f"{ans.memory_layout}" + "".join(f"; {c.text()}" for c in ans.checks)
        )
    if plan.message:
        lines.append(plan.message)
    for i, p in enumerate(plan.picks, 1):
        cost = p.monthly_usd if p.monthly_usd is not None else p.run_cost_usd
        lines.append(
            f"{i}. {p.offer_id} ({p.layout}, {counted(p.replicas, 'replica')}, {p.weights_format}): {cost:,.0f} USD"
        )
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


def _format_serve(r: ServeReport) -> str:
    x = r.at_load
    head = (
        f"{r.model} on {r.gpu} (tp {r.tp}, pp {r.pp}), {r.input_tokens:,} input + {r.output_tokens:,} output tokens, "
        f"{x.load_kind.replace('_', ' ')} {x.load:g}"
    )
    if x.saturated:
        lines = [head, f"SATURATED: more than one replica serves (it saturates at {r.max_requests_per_s:.2f} req/s)"]
    else:
        lines = [
            head,
            f"TTFT      mean {x.ttft_mean_s * 1e3:,.0f} ms, p50 {x.ttft_p50_s * 1e3:,.0f} ms, "
            f"p95 {x.ttft_p95_s * 1e3:,.0f} ms",
            f"TPOT      mean {(x.tpot_mean_s or 0) * 1e3:,.1f} ms, p50 {(x.tpot_p50_s or 0) * 1e3:,.1f} ms",
            f"E2E       mean {x.e2e_mean_s:,.2f} s",
            f"through   {x.requests_per_s:,.2f} req/s, {x.output_tokens_per_s:,.0f} output tok/s, "
            f"{x.running_sequences:,.1f} sequences running (at most {x.max_running_sequences:,})",
        ]
        lines += [
            f"error band, {n}: {b.text}"
            for b, n in ((r.error_band.ttft_mean_s, "TTFT"), (r.error_band.tpot_mean_s, "TPOT"))
        ]
    if r.capacity_requests_per_s is not None:
        lines.append(f"capacity  {r.capacity_requests_per_s:,.2f} req/s within the targets")
    if r.replicas:
        lines.append(f"replicas  {r.replicas} for a peak of {r.peak_requests_per_s:,.2f} req/s")
    return "\n".join(lines + [f"note: {n}" for n in x.notes])
