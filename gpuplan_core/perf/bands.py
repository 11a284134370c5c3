"""How far to trust one predicted number: the error band of its regime, from the calibration residuals
(calibration.py), or a plain "no comparable measurement" where a regime has none."""

from __future__ import annotations

import statistics
from functools import lru_cache

from ..hardware.catalog import get_gpu
from ..results.bands import ErrorBand
from .calibration import lean, phase_of, regime, regime_residuals
from .serving_calibration import HEADLINE_REGIME, serving_table


def error_band(
    gpu: str,
    weights_format: str,
    phase: str,
    moe: bool = False,
    eager: bool = False,
    residuals: dict[str, list[float]] | None = None,
) -> ErrorBand:
    """The band of a prediction from the residuals of its regime (``residuals``: for tests, a table of one's own).
    Where the regime has no point, the phase's band over every dense, CUDA-graph regime is given beside it."""
    res = residuals if residuals is not None else regime_residuals()
    key = regime(gpu, weights_format, phase, moe, eager)
    errs = res.get(key, [])
    if errs:
        return ErrorBand(
            regime=key,
            points=len(errs),
            band=statistics.median(abs(e) for e in errs),
            bias=statistics.median(errs),
        )
    wider = [e for k, v in res.items() if k.split(" · ")[2:] == [phase] for e in v]
    return ErrorBand(
        regime=key,
        points=0,
        band=None,
        bias=None,
        phase_band=statistics.median(abs(e) for e in wider) if wider else None,
        phase_points=len(wider),
    )


def perf_bands(gpu: str, weights_format: str, moe: bool, eager: bool, batch: int) -> dict[str, ErrorBand]:
    """The band of each predicted time and throughput of a static batch (perf.predict's outputs)."""
    phases = ("prefill", "decode", phase_of("output_tokens_per_s", batch))
    prefill, decode, through = (error_band(gpu, weights_format, p, moe, eager) for p in phases)
    return {
        "ttft_s": prefill,
        "prefill_tokens_per_s": prefill,
        "tpot_s": decode,
        "decode_tokens_per_s": decode,
        "decode_tokens_per_s_per_sequence": decode,
        "e2e_request_s": through,
        "output_tokens_per_s": through,
    }


@lru_cache(maxsize=1)
def _serving_residuals() -> dict[tuple[str, str], list[float]]:
    out: dict[tuple[str, str], list[float]] = {}
    for r in serving_table():
        if r["error"] is not None and r["split"] == "held out":
            metric = "tpot" if r["metric"] in ("itl", "tpot") else r["metric"]
            out.setdefault((r["regime"], metric), []).append(lean(r["metric"], r["error"]))
    return out


def serving_bands(moe: bool, gpu: str | None = None) -> dict[str, ErrorBand]:
    """The band of each predicted number of a replica under traffic (serving.serve's outputs), from the published
    load sweeps of its kind: dense models on continuously batching engines, or the MoE runs. Every sweep ran on
    GPUs: on another accelerator (``gpu`` a TPU, Trainium, Inferentia or Gaudi) no sweep is comparable."""
    kind = "MoE" if moe else HEADLINE_REGIME
    res = _serving_residuals()
    if gpu is not None and not (g := get_gpu(gpu)).is_gpu:
        kind, res = g.architecture, {}

    def band(metric: str) -> ErrorBand:
        errs = res.get((kind, metric), [])
        return ErrorBand(
            regime=f"serving under load · {kind}",
            points=len(errs),
            band=statistics.median(abs(e) for e in errs) if errs else None,
            bias=statistics.median(errs) if errs else None,
        )

    ttft, tpot, through = band("ttft"), band("tpot"), band("output_tokens_per_s")
    return {
        "ttft_mean_s": ttft,
        "ttft_p50_s": ttft,
        "ttft_p95_s": ttft,
        "tpot_mean_s": tpot,
        "tpot_p50_s": tpot,
        "e2e_mean_s": tpot,
        "output_tokens_per_s": through,
        "requests_per_s": through,
        "capacity_requests_per_s": through,
        "max_requests_per_s": through,
    }
