"""perf/bands.py: how far to trust a predicted number. A regime's band is the median |error| of its calibration
residuals and its bias the median signed error (hand tables here); an empty regime gives the phase's band over the
dense, CUDA-graph regimes; a replica under load reads the published serving sweeps of its kind."""

import statistics

import pytest

from gpuplan_core.perf.bands import error_band, perf_bands, serving_bands
from gpuplan_core.perf.calibration import THROUGHPUT_MIN_BATCH
from gpuplan_core.perf.serving_calibration import HEADLINE_REGIME, serving_table
from gpuplan_core.results.bands import ErrorBand

RESIDUALS = {
    "Hopper · 16-bit · decode": [0.1, -0.2, 0.3, -0.05],
    "Ada · 16-bit · decode": [0.5],
    "Hopper · 16-bit · decode · MoE": [2.0],  # a MoE regime: not in the dense phase band
    "Hopper · 16-bit · prefill": [0.4],
}


def test_a_regime_with_points_is_the_median_of_their_errors():
    """H100 SXM (Hopper), BF16 (16-bit), decode: |errors| 0.05, 0.1, 0.2, 0.3 -> median (0.1 + 0.2) / 2 = 0.15;
    signed -0.2, -0.05, 0.1, 0.3 -> (-0.05 + 0.1) / 2 = 0.025."""
    b = error_band("H100-SXM", "bf16", "decode", residuals=RESIDUALS)
    assert (b.regime, b.points) == ("Hopper · 16-bit · decode", 4)
    assert b.band == pytest.approx(0.15) and b.bias == pytest.approx(0.025)
    assert b.phase_band is None and b.short == "±15% (4 measurements)"


def test_moe_and_eager_are_regimes_of_their_own():
    b = error_band("H100-SXM", "bf16", "decode", moe=True, residuals=RESIDUALS)
    assert (b.regime, b.points, b.band, b.bias) == ("Hopper · 16-bit · decode · MoE", 1, 2.0, 2.0)
    eager = error_band("H100-SXM", "bf16", "decode", eager=True, residuals=RESIDUALS)
    assert (eager.regime, eager.points) == ("Hopper · 16-bit · decode · transformers eager", 0)


def test_an_empty_regime_has_no_band_and_gives_the_phase_s_band_over_dense_cuda_graph_regimes():
    """B200 (Blackwell) decode has no point: the decode regimes without a MoE or eager suffix are Hopper's 4 and
    Ada's 1 -> |errors| 0.05, 0.1, 0.2, 0.3, 0.5: median 0.2 over 5 points (the MoE 2.0 and prefill 0.4 left out)."""
    b = error_band("B200", "bf16", "decode", residuals=RESIDUALS)
    assert (b.regime, b.points, b.band, b.bias) == ("Blackwell · 16-bit · decode", 0, None, None)
    assert (b.phase_band, b.phase_points) == (pytest.approx(0.2), 5)
    assert b.short == "no comparable measurement"
    none = error_band("B200", "bf16", "memory", residuals=RESIDUALS)
    assert (none.phase_band, none.phase_points) == (None, 0)


def test_a_static_batch_s_throughput_takes_decode_s_band_below_the_throughput_batch():
    """Below THROUGHPUT_MIN_BATCH (16) sequences a request's time is mostly decode steps."""
    assert THROUGHPUT_MIN_BATCH == 16
    small, large = (perf_bands("H100-SXM", "bf16", False, False, b) for b in (8, 64))
    decode, prefill = (error_band("H100-SXM", "bf16", p) for p in ("decode", "prefill"))
    assert small["output_tokens_per_s"] == small["e2e_request_s"] == small["tpot_s"] == decode
    assert large["output_tokens_per_s"].regime == "Hopper · 16-bit · throughput"
    assert large["ttft_s"] == large["prefill_tokens_per_s"] == prefill
    assert set(small) == {
        "ttft_s",
        "prefill_tokens_per_s",
        "tpot_s",
        "decode_tokens_per_s",
        "decode_tokens_per_s_per_sequence",
        "e2e_request_s",
        "output_tokens_per_s",
    }


def _held_out(regime: str, metrics: tuple[str, ...]) -> list[float]:
    """The stored serving predictions' held-out errors, + where the model was optimistic (a time predicted short)."""
    return [
        -r["error"] if r["metric"] != "output_tokens_per_s" else r["error"]
        for r in serving_table()
        if r["regime"] == regime and r["split"] == "held out" and r["error"] is not None and r["metric"] in metrics
    ]


@pytest.mark.parametrize("moe,regime", [(False, HEADLINE_REGIME), (True, "MoE")])
def test_a_replica_under_load_reads_the_held_out_serving_sweeps_of_its_kind(moe, regime):
    bands = serving_bands(moe)
    for key, metrics in (
        ("ttft_p95_s", ("ttft",)),
        ("tpot_mean_s", ("itl", "tpot")),
        ("output_tokens_per_s", ("output_tokens_per_s",)),
    ):
        errs = _held_out(regime, metrics)
        b = bands[key]
        assert b.regime == f"serving under load · {regime}" and b.points == len(errs) > 0
        assert b.band == pytest.approx(statistics.median(abs(e) for e in errs))
        assert b.bias == pytest.approx(statistics.median(errs))
    assert bands["ttft_mean_s"] == bands["ttft_p50_s"] == bands["ttft_p95_s"]
    assert bands["capacity_requests_per_s"] == bands["max_requests_per_s"] == bands["output_tokens_per_s"]


def test_on_another_accelerator_no_published_sweep_is_comparable():
    b = serving_bands(False, "TPU-v6e")["ttft_p95_s"]
    assert b == ErrorBand(regime="serving under load · TPU v6e", points=0, band=None, bias=None)
    assert serving_bands(False, "H100-SXM") == serving_bands(False)  # a GPU: the sweeps of its kind
