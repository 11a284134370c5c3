"""Reference tables: the calibration against published measurements (Performance, Methodology), the GPU catalog
and the offers (Data), and Methodology's registry tables (pure: typed reports and the core's catalogs in,
DataFrames out)."""

from __future__ import annotations

import pandas as pd

from gpuplan_core import (
    FORMATS,
    GPU,
    Assumptions,
    CalibrationReport,
    Offer,
    PerfAssumptions,
    counted,
    load_efficiency,
    price_age_days,
    staleness,
)

# --- Calibration ------------------------------------------------------------------------------------


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


def serving_calibration(cal: CalibrationReport) -> pd.DataFrame:
    """Serving under load: the held-out error per regime and metric, with what each regime is."""
    names = {"ttft": "TTFT", "itl": "time between tokens", "tpot": "TPOT", "output_tokens_per_s": "output tokens/s"}
    return pd.DataFrame(
        [
            {
                "regime": s.regime,
                "metric": names.get(s.metric, s.metric),
                "held-out points": s.points,
                "median error (absolute)": f"{s.median_abs_error:.0%}",
                "within 25%": f"{s.within_25:.0%}",
                "bias (median signed error)": f"{s.median_error:+.0%}",
                "what it covers": cal.serving_regimes[s.regime],
            }
            for s in cal.serving_summary
        ]
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


# --- Data page --------------------------------------------------------------------------------------


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


# --- Methodology ------------------------------------------------------------------------------------


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
                "KV block": counted(e.kv_block_tokens, "token"),
                "source": e.source,
            }
            for e in ENGINES.values()
        ]
    )


def engine_releases() -> pd.DataFrame:
    """Each engine release line's scheduling defaults, where they differ between lines (the engine-version input)."""
    from gpuplan_core import ENGINE_RELEASES

    def chunking(r) -> str:
        if r.chunked_prefill == "long_context":
            return f"only for a context over {r.long_context_tokens:,} tokens"
        return "always" if r.chunked_prefill == "on" else "off (whole prompts)"

    def budget(r) -> str:
        chunked = f"{r.chunk_tokens:,}" if r.chunk_tokens else "by GPU (the engine's rule)"
        if r.chunked_prefill == "long_context" and r.unchunked_min_tokens:
            return f"{chunked} chunked; else the context, at least {r.unchunked_min_tokens:,}"
        return chunked

    return pd.DataFrame(
        [
            {
                "release": r.label,
                "chunked prefill": chunking(r),
                "tokens per step": budget(r),
                "sequences at once": f"{r.max_num_seqs:,}" if r.max_num_seqs else "by GPU (the engine's rule)",
                "CUDA graphs up to": f"batch {r.cuda_graph_max_batch:,}" if r.cuda_graph_max_batch else "not stated",
                "source": r.source,
            }
            for r in ENGINE_RELEASES.values()
        ]
    )


def formats() -> pd.DataFrame:
    """Every number format: its bits and bytes per value and the math its matmuls run in."""
    return pd.DataFrame(
        [
            {
                "format": f.label,
                "bits per value": round(f.bits_per_value, 4),
                "bytes per value": round(f.bytes_per_value, 4),
                "matmuls run in": f.math.upper(),
                "note": f.note,
            }
            for f in FORMATS.values()
        ]
    )


def assumptions() -> pd.DataFrame:
    """The adjustable memory and speed assumptions: each default and why (from the models' fields)."""
    rows = []
    for model, area in ((Assumptions, "memory"), (PerfAssumptions, "speed")):
        for name, field in model.model_fields.items():
            default = field.default
            if isinstance(default, float) and default > 1e6:
                default = f"{default / 2**30:.2f} GiB" if default % 2**20 == 0 or default > 1e8 else default
            rows.append(
                {
                    "area": area,
                    "name": name,
                    "default": "computed" if default is None else str(default),
                    "why": field.description or "",
                }
            )
    return pd.DataFrame(rows)
