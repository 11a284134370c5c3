"""Pure table builders: a typed report from gpuplan_core.api in, the pandas DataFrame a page shows out.

Like figures.py, nothing here imports streamlit and nothing computes a number: columns are report
values, rounded for display and labelled with their units. cached.py keeps each built table with its
report, so a rerun that shows the same scenario builds nothing.
"""

from __future__ import annotations

import math
import re

import pandas as pd

from gpuplan_core import (
    GPU,
    CalibrationReport,
    GpuPerf,
    InferenceCostRow,
    MemoryReport,
    Offer,
    Pick,
    Rejected,
    TrainingCostRow,
    load_efficiency,
    price_age_days,
    staleness,
)


def _r(x: float | None, nd: int) -> float | None:
    return None if x is None else round(x, nd)


SNAKE = re.compile(r"[a-z0-9]+(_[a-z0-9]+)+")


def tidy(x: float) -> float:
    """A float rounded to what matters: 3 significant figures below 100, whole numbers above."""
    if not math.isfinite(x) or x == 0:
        return x
    a = abs(x)
    if a >= 100:
        return float(round(x))
    return round(x, min(4, 2 - math.floor(math.log10(a))))


def as_text(x) -> str:
    """A number as text, rounded to what matters, with thousands separators; a missing value as "n/a"."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return str(x)
    v = tidy(float(x))
    return f"{v:,.0f}" if v == int(v) else f"{v:,.{max(0, -math.floor(math.log10(abs(v))) + 2)}f}".rstrip("0")


def for_people(df: pd.DataFrame) -> pd.DataFrame:
    """What a table shows: floats rounded to what matters, every missing value as "n/a", no snake_case header
    (the CSV download keeps the full-precision frame). A number column with gaps becomes text (one type per
    column: Arrow needs it)."""
    out = df.copy()
    for col in out.columns:
        s = out[col]
        if s.isna().any():
            s = s.map(as_text)
        elif pd.api.types.is_float_dtype(s):
            s = s.map(tidy)
        out[col] = s
    out.columns = [c.replace("_", " ") if SNAKE.fullmatch(str(c)) else c for c in out.columns]
    return out


# --- Memory page ---------------------------------------------------------------------------------


def memory_components(mem: MemoryReport) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "component": k,
                "GB (10^9 B)": round(v / 1e9, 3),
                "GiB (2^30 B)": round(v / 2**30, 3),
                "bytes": v,
                "basis": mem.provenance[k],
            }
            for k, v in mem.components.items()
        ]
    )


def memory_gpus(mem: MemoryReport) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "GPU": g.gpu,
                "fits": "yes" if g.fits else "no",
                "usable VRAM (GiB)": round(g.vram_usable_bytes / 2**30, 2),
                "budget (GB)": round(g.budget_bytes / 1e9, 1),
                "min GPUs": g.min_gpus,
                "min layout": "-"
                if not g.min_layout
                else f"tp {g.min_layout.tp} x pp {g.min_layout.pp} x dp {g.min_layout.dp}",
                "max batch at this context": g.max_batch,
                "max context at this batch": g.max_context,
                "KV capacity (tokens)": g.kv_capacity_tokens,
            }
            for g in mem.gpus
        ]
    )


# --- Performance page ----------------------------------------------------------------------------


def perf_phases(p: GpuPerf) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "phase": ph.name,
                "TFLOP": round(ph.flops / 1e12, 4),
                "GB moved": round(ph.bytes / 1e9, 3),
                "intensity (FLOP/B)": round(ph.intensity_flops_per_byte, 1),
                "bound": ph.bound,
                "time (ms)": round(ph.time_s * 1e3, 3),
                "MFU": round(ph.mfu, 3),
                "MBU": round(ph.mbu, 3),
            }
            for ph in (p.prefill, p.decode)
        ]
    )


def perf_gpus(rows: list[GpuPerf]) -> pd.DataFrame:
    """One row per GPU that fits."""
    return pd.DataFrame(
        [
            {
                "GPU": r.gpu,
                "GPUs": r.gpu_count,
                "tp": r.tp,
                "pp": r.pp,
                "batch": r.batch,
                "TTFT (ms)": round(r.ttft_s * 1e3, 1),
                "TPOT (ms)": round(r.tpot_s * 1e3, 2),
                "tokens/s per user": round(r.decode_tokens_per_s_per_sequence, 1),
                "output tokens/s": round(r.output_tokens_per_s, 0),
                "max batch": r.max_batch,
                "compute-bound batch": r.compute_bound_batch,
                "decode bound": r.decode.bound,
                "error band (TTFT; TPOT)": f"{r.error_band.ttft_s.short}; {r.error_band.tpot_s.short}",
            }
            for r in rows
        ]
    )


def calibration(cal: CalibrationReport) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "id": r.id,
                "regime": r.regime,
                "GPU": f"{r.gpu} x{r.gpu_count}",
                "model": r.model,
                "metric": r.metric,
                "batch": r.batch,
                "measured": round(r.measured, 2),
                "predicted": round(r.predicted, 2),
                "unit": r.unit,
                "error": f"{r.error:+.1%}",
                "setup": r.setup,
                "source": r.source,
            }
            for r in cal.points
        ]
    )


def rejected(rows: list[Rejected]) -> pd.DataFrame:
    """What cannot run and why (plan and cost reports' ``rejected``)."""
    return pd.DataFrame(
        [
            {
                "GPU": r.gpu,
                "offer": r.offer_id or "any offer",
                "weights": r.weights_format or "n/a",
                "layout": r.layout or "any layout",
                "why it cannot run": r.reason,
            }
            for r in rows
        ]
    )


def differences(result) -> pd.DataFrame:
    """Compare's table: each measure for A and B and the change B - A (absolute and %), all as shown text."""
    return pd.DataFrame(
        [{"measure": r.metric, "A": r.a, "B": r.b, "B - A": r.change, "change": r.change_pct} for r in result.rows]
    )


def efficiency() -> pd.DataFrame:
    """data/efficiency.csv as shown on Methodology."""
    return load_efficiency().rename(
        columns={
            "architecture": "GPU generation",
            "format_family": "format family",
            "weight_mbu_format_factor": "weight-read efficiency vs 16-bit",
            "points": "measurements",
        }
    )


def calibration_regimes(cal: CalibrationReport) -> pd.DataFrame:
    """Per regime (GPU generation x format x phase): points and errors; regimes without a point say so."""
    return pd.DataFrame(
        [
            {
                "regime": r.regime,
                "measurements": r.points,
                "median error (absolute)": "no measurement" if not r.points else f"{r.median_abs_error:.0%}",
                "bias (median signed error)": "" if not r.points else f"{r.median_error:+.0%}",
            }
            for r in cal.regimes
        ]
    )


# --- Overview (recommendation) -------------------------------------------------------------------


def serving_calibration(cal: CalibrationReport) -> pd.DataFrame:
    """Serving under load: the error per regime and metric, with what each regime is."""
    names = {"ttft": "TTFT", "itl": "time between tokens", "tpot": "TPOT", "output_tokens_per_s": "output tokens/s"}
    return pd.DataFrame(
        [
            {
                "regime": s.regime,
                "metric": names.get(s.metric, s.metric),
                "points": s.points,
                "median error (absolute)": f"{s.median_abs_error:.0%}",
                "bias (median signed error)": f"{s.median_error:+.0%}",
                "what it covers": cal.serving_regimes[s.regime],
            }
            for s in cal.serving_summary
        ]
    )


def picks(plan, training: bool) -> pd.DataFrame:
    """The plan's picks (a typed Plan): the layout and price of each."""
    df = pd.DataFrame(
        [
            {
                "offer": p.offer_id,
                "cost (USD)": round(p.monthly_usd if p.monthly_usd is not None else p.run_cost_usd, 2),
                "provider": p.provider,
                "layout": p.layout,
                "replicas": p.replicas,
                "GPUs paid": p.gpus,
                "weights": p.weights_format,
                "billing": p.billing_model,
                "p95 TTFT (ms)": None if p.ttft_s is None else round(p.ttft_s * 1e3, 1),
                "TPOT (ms)": None if p.tpot_s is None else round(p.tpot_s * 1e3, 2),
                "latency error band": p.error_band,
                "wall hours": _r(p.wall_hours, 1),
                "price date": p.price_as_of,
                "source": p.source,
            }
            for p in plan.picks
        ]
    )
    return df.drop(
        columns=["p95 TTFT (ms)", "TPOT (ms)", "latency error band", "replicas"] if training else ["wall hours"]
    )


# --- Cost page -----------------------------------------------------------------------------------


def cost_always_on(rows: list[InferenceCostRow]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "offer": r.offer_id,
                "monthly (USD)": round(r.monthly_always_on_usd, 2),
                "GPU": r.gpu,
                "GPUs": r.gpus,
                "$/1M out": round(r.output_cost_per_million_usd, 3),
            }
            for r in sorted(rows, key=lambda r: r.monthly_always_on_usd)
        ]
    )


def cost_per_run(rows: list[InferenceCostRow]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "offer": r.offer_id,
                "per run (USD)": round(r.run_cost_usd, 2),
                "GPU": r.gpu,
                "GPUs": r.gpus // max(1, r.replicas),
                "hours": round(r.run_hours, 3),
            }
            for r in rows
        ]
    )


def cost_detail(rows: list[InferenceCostRow]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "offer": r.offer_id,
                "monthly always-on (USD)": round(r.monthly_always_on_usd, 2),
                "provider": r.provider,
                "GPU": r.gpu,
                "GPUs": r.gpus,
                "replicas": r.replicas,
                "billing": r.billing_model,
                "per run (USD)": round(r.run_cost_usd, 2),
                "$/1M output tokens": round(r.output_cost_per_million_usd, 3),
                "$/1M input tokens": round(r.input_cost_per_million_usd, 4),
                "TTFT (ms)": round(r.ttft_s * 1e3, 1),
                "TPOT (ms)": round(r.tpot_s * 1e3, 2),
                "latency error band": r.error_band,
                "notes": "; ".join(r.notes),
                "price date": r.price_as_of,
                "source": r.source,
            }
            for r in rows
        ]
    )


def serverless(rows: list[Pick]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "offer": r.offer_id,
                "monthly (USD)": round(r.monthly_usd, 2),
                "GPU": r.gpu,
                "billing": r.billing_model,
                "workers": r.replicas,
                "why": "; ".join(r.why[1:]),
            }
            for r in rows
        ]
    )


def training_runs(rows: list[TrainingCostRow]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "offer": r.offer_id,
                "per-run (USD)": round(r.run_cost_usd, 2),
                "GPU": r.gpu,
                "GPUs": r.gpus,
                "billing": r.billing_model,
                "GPU-hours": round(r.gpu_hours, 0),
                "wall hours": round(r.wall_hours, 1),
                "monthly always-on (USD)": round(r.monthly_always_on_usd, 2),
                "price date": r.price_as_of,
                "notes": "; ".join(r.notes[2:]),
            }
            for r in rows
        ]
    )


def training_monthly(runs: pd.DataFrame) -> pd.DataFrame:
    return runs[["offer", "GPUs", "monthly always-on (USD)"]].sort_values("monthly always-on (USD)")


# --- Data page -----------------------------------------------------------------------------------


def gpu_catalog(gpus: list[GPU]) -> pd.DataFrame:
    """The GPU catalog with people's headers and units (dense peaks only)."""
    return pd.DataFrame(
        [
            {
                "GPU": g.family if g.family == g.gpu else f"{g.family} {g.variant}",
                "id": g.gpu,
                "generation": g.architecture,
                "memory on the label (GB)": g.vram_nominal_gb,
                "usable memory (GiB)": g.vram_usable_gib,
                "memory type": g.memory_type,
                "bandwidth (GB/s)": g.bandwidth_gb_s,
                "BF16 (TFLOPS)": g.bf16_dense_tflops,
                "FP8 (TFLOPS)": g.fp8_dense_tflops,
                "INT8 (TOPS)": g.int8_dense_tops,
                "FP4 (TFLOPS)": g.fp4_dense_tflops,
                "GPU-to-GPU link (GB/s each way)": g.link_gb_s_per_direction,
                "power (W)": g.tdp_w,
            }
            for g in gpus
        ]
    )


def gpu_sources(gpus: list[GPU]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "GPU": g.gpu,
                "usable memory measured by": g.vram_usable_source,
                "sources": g.sources,
                "notes": g.notes,
                "also called": "; ".join(g.aliases),
            }
            for g in gpus
        ]
    )


def pricing_offers(offers: list[Offer]) -> pd.DataFrame:
    """Every offer with its source, date, age and staleness (age is counted from today)."""
    return pd.DataFrame(
        [
            {
                "offer": o.offer_id,
                "provider": o.provider,
                "product": o.product,
                "GPU": o.gpu,
                "GPUs/node": o.gpus_per_node,
                "billing": o.billing_model,
                "USD/GPU-hour": round(o.price_per_gpu_hour_usd, 4),
                "USD/node-hour": round(o.price_per_node_hour_usd, 4),
                "increment (s)": o.billing_increment_s,
                "minimum (s)": o.min_billed_s,
                "region": o.region,
                "price as of": o.price_as_of,
                "age (days)": price_age_days(o.price_as_of),
                "stale": staleness(o.price_as_of),
                "retrieved": o.retrieved_date,
                "source": o.source,
                "notes": o.notes,
            }
            for o in offers
        ]
    )


# --- Methodology ---------------------------------------------------------------------------------


def inputs() -> pd.DataFrame:
    """Every input: its link key, label, default and what is allowed (from the registry)."""
    from gpuplan_core import JOBS, RECORDS

    rows = []
    for i in RECORDS:
        jobs = "all" if len(i.jobs) == len(JOBS) else ", ".join(JOBS[j].split(" (")[0] for j in sorted(i.jobs))
        rows.append(
            {
                "link key": i.key,
                "input": i.label,
                "where": f"{i.page or 'Overview'} page" if i.page is not None else f"sidebar: {i.group}",
                "applies to": jobs,
                "default": i.link_value(i.default),
                "allowed": i.allowed(),
                "scenario field (CLI flag)": f"{i.field} ({i.flag})" if i.flag else (i.field or ""),
                "what it means": i.help,
            }
        )
    return pd.DataFrame(rows)


def use_cases() -> pd.DataFrame:
    """The use-case presets and the values each sets."""
    from gpuplan_core import USE_CASES

    return pd.DataFrame(
        [
            {
                "use case": preset["label"],
                "input tokens": f"{preset['in']:,.0f}",
                "output tokens": f"{preset['out']:,.0f}",
                "TTFT target (p95)": f"{preset['ttft_ms']:,.0f} ms" if preset["ttft_ms"] else "none",
                "TPOT target (mean)": f"{preset['tpot_ms']:,.0f} ms" if preset["tpot_ms"] else "none",
            }
            for k, preset in USE_CASES.items()
            if k != "custom"
        ]
    )


def engines() -> pd.DataFrame:
    """The serving engines' runtime memory terms and where each comes from."""
    from gpuplan_core import ENGINES

    return pd.DataFrame(
        [
            {
                "engine": e.label,
                "CUDA graphs": "yes" if e.cuda_graphs else "no",
                "largest prefill step": f"{e.prefill_chunk_tokens:,} tokens"
                if e.prefill_chunk_tokens
                else "the whole prompt of every sequence",
                "logits held (fp32)": f"{e.logits_sequences:,} sequences" if e.logits_sequences else "one per sequence",
                "KV block": f"{e.kv_block_tokens} token(s)",
                "source": e.source,
            }
            for e in ENGINES.values()
        ]
    )
