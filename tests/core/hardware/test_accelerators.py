"""The other accelerators in the catalog (TPU v5e / v5p / v6e, Trainium2, Inferentia2, Gaudi 3): their rows hold the
vendors' figures, the memory and roofline models read them as they read a GPU, their speed carries the "no
comparable measurement" band, their offers are priced per chip-hour, and the recommender considers them only when
the scenario allows them (off by default: the answers stay those of a GPU-only catalog)."""

from __future__ import annotations

import pytest

from gpuplan_core.hardware.catalog import catalog_gpus, get_gpu, load_gpus
from gpuplan_core.interface.cli import build_parser, scenario_from_args
from gpuplan_core.interface.registry import INPUTS
from gpuplan_core.memory.components import MemoryRequest
from gpuplan_core.memory.fit import fit_on_gpu
from gpuplan_core.model.presets import get_preset
from gpuplan_core.perf.bands import error_band, serving_bands
from gpuplan_core.plan.cost import filter_offers
from gpuplan_core.plan.recommend import recommend
from gpuplan_core.pricing.csv_file import load_pricing
from gpuplan_core.scenario.deployment import Pricing
from gpuplan_core.scenario.scenario import Scenario

GiB = 2**30
OFFERS = load_pricing().offers
GPU_ONLY = [o for o in OFFERS if get_gpu(o.gpu).is_gpu]

# id: (kind, HBM GB as labelled, bandwidth GB/s, dense BF16 TFLOPS, FP8, INT8, link GB/s per direction, link,
#      chips per host), each from the vendor's page named in the row's sources
VENDOR = {
    "TPU-v5e": ("tpu", 16, 819, 197, None, 393, 200, "ICI", 8),  # ICI 400 GBps bidirectional
    "TPU-v5p": ("tpu", 95, 2765, 459, 459, None, 600, "ICI", 4),  # ICI 1200 GBps bidirectional
    "TPU-v6e": ("tpu", 32, 1638, 918, None, 1836, 400, "ICI", 8),  # ICI 800 GBps bidirectional
    "Trainium2": ("trainium", 96, 2900, 667, 1299, None, 512, "NeuronLink", 16),  # 1,024 GB/s per device
    "Inferentia2": ("inferentia", 32, 880.5, 190, 190, 380, 103, "NeuronLink", 12),  # 820 GiB/s; 192 GiB/s link
    "Gaudi3": ("gaudi", 128, 3670, 1835, 1835, None, 525, "RoCE", 8),  # 21 x 200 GbE to the 7 peers
}


@pytest.mark.parametrize("gid", VENDOR)
def test_each_row_holds_the_vendors_figures(gid):
    g = get_gpu(gid)
    kind, hbm, bw, bf16, fp8, int8, link, link_type, per_host = VENDOR[gid]
    assert (g.kind, g.vram_nominal_gb, g.bandwidth_gb_s, g.bf16_dense_tflops) == (kind, hbm, bw, bf16)
    assert (g.fp8_dense_tflops, g.int8_dense_tops, g.link_gb_s_per_direction) == (fp8, int8, link)
    assert (g.link_type, g.chips_per_host, g.is_gpu) == (link_type, per_host, False)
    assert g.vram_usable_gib < g.vram_nominal_gb and "estimate" in g.vram_usable_source
    vendor = {"tpu": "Google Cloud TPU docs", "trainium": "AWS Neuron docs", "inferentia": "AWS Neuron docs"}
    assert vendor.get(kind, "Intel Gaudi 3") in g.sources


def test_aliases_reach_the_rows():
    assert [get_gpu(n).gpu for n in ("v5e", "TPU v5p", "Trillium", "trn2", "inf2", "Gaudi 3")] == [
        "TPU-v5e",
        "TPU-v5p",
        "TPU-v6e",
        "Trainium2",
        "Inferentia2",
        "Gaudi3",
    ]


def test_the_gpu_rows_stay_gpus_and_the_search_set_leaves_the_others_out_unless_allowed():
    assert {g.kind for g in load_gpus() if g.gpu not in VENDOR} == {"gpu"}
    assert {g.gpu for g in load_gpus()} - {g.gpu for g in catalog_gpus()} == set(VENDOR)
    assert catalog_gpus(allow_accelerators=True) == load_gpus()


# ---- roofline: the ridge point, dense BF16 FLOP/s / HBM bytes/s --------------------------------------------------


@pytest.mark.parametrize(
    "gid, ridge",
    [
        ("TPU-v5e", 197e12 / 819e9),  # 240.5: the Scaling Book's bf16 critical batch size, 240
        ("TPU-v5p", 459e12 / 2765e9),  # 166.0
        ("TPU-v6e", 918e12 / 1638e9),  # 560.4
        ("Trainium2", 667e12 / 2900e9),  # 230.0
        ("Inferentia2", 190e12 / 880.5e9),  # 215.8
        ("Gaudi3", 1835e12 / 3670e9),  # 500.0
    ],
)
def test_ridge_point_is_dense_bf16_over_bandwidth(gid, ridge):
    assert get_gpu(gid).ridge_flops_per_byte == pytest.approx(ridge, rel=1e-12)


def test_scaling_book_critical_batch_of_tpu_v5e_from_the_catalog_row():
    """A bf16 matmul of B tokens against bf16 weights does 2 B FLOPs per 2-byte weight read: B FLOPs per byte, so
    it turns compute-bound at B = peak / bandwidth. The Scaling Book (tpus.md) gives 240 for TPU v5e in bf16."""
    g = get_gpu("TPU-v5e")
    critical = g.bf16_dense_tflops * 1e12 / (g.bandwidth_gb_s * 1e9)
    assert critical == pytest.approx(240.5, abs=0.05)
    assert round(critical, -1) == 240


# ---- memory: the same budget, the chip's HBM --------------------------------------------------------------------

LLAMA_8B_BF16_WEIGHTS = 8_030_261_248 * 2  # bytes: Llama-3.1-8B's parameters x 2 bytes
KV_8_X_2K = 32 * 2 * 8 * 128 * 2 * 8 * 2048  # layers x (K, V) x KV heads x head dim x 2 bytes x batch 8 x 2,048 tokens


def _fit(gid: str):
    return fit_on_gpu(get_preset("Llama-3.1-8B"), MemoryRequest(batch=8, context_tokens=2048), get_gpu(gid))


@pytest.mark.parametrize("gid", ["TPU-v5p", "TPU-v6e", "Trainium2", "Inferentia2", "Gaudi3"])
def test_llama_8b_bf16_at_batch_8_by_2k_fits_on_one_chip(gid):
    f = _fit(gid)
    assert f.fits and f.budget_bytes == pytest.approx(get_gpu(gid).vram_usable_gib * GiB * 0.90)
    assert f.per_gpu_bytes > LLAMA_8B_BF16_WEIGHTS + KV_8_X_2K  # weights + KV (2 GiB) + runtime terms


def test_llama_8b_bf16_at_batch_8_by_2k_does_not_fit_a_16_gb_tpu_v5e():
    f = _fit("TPU-v5e")
    budget = 15.75 * GiB * 0.90  # 15.2 GiB of the chip's 16 GB a job may fill
    assert budget < LLAMA_8B_BF16_WEIGHTS + KV_8_X_2K  # 14.96 GiB + 2 GiB, before any activation
    assert not f.fits and f.budget_bytes == pytest.approx(budget)
    assert f.min_gpus == 2  # two v5e chips hold it


# ---- speed: a roofline estimate with no comparable measurement ----------------------------------------------------


@pytest.mark.parametrize("gid", VENDOR)
@pytest.mark.parametrize("phase", ["prefill", "decode", "throughput"])
def test_estimates_on_accelerators_carry_no_comparable_measurement(gid, phase):
    band = error_band(gid, "bf16", phase)
    assert band.points == 0 and band.band is None
    assert band.short == "no comparable measurement"
    assert band.regime.startswith(get_gpu(gid).architecture + " · ")


def test_serving_under_load_on_an_accelerator_has_no_comparable_sweep():
    band = serving_bands(moe=False, gpu="Trainium2")["ttft_p95_s"]
    assert (band.points, band.regime) == (0, "serving under load · NeuronCore-v3")
    assert band.text.startswith("No comparable measurement") and serving_bands(False, "H100")["ttft_p95_s"].points


# ---- prices per chip-hour -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "offer_id, chips, node_usd",
    [
        ("gcp-tpu-v5litepod-8-usc1-od", 8, 9.6),  # 1.20 per chip-hour
        ("gcp-tpu-v5litepod-8-usc1-spot", 8, 1.95941),
        ("gcp-tpu-v5p-8-usc1-od", 4, 16.8),  # v5p-8 counts TensorCores: 4 chips, 4.20 per chip-hour
        ("gcp-tpu-v6e-8-usc1-od", 8, 21.6),  # 2.70 per chip-hour
        ("gcp-tpu-v6e-8-usc1-spot", 8, 4.35366),
        ("aws-trn2-48xl-use2-od", 16, 35.76),  # 2.235 per chip-hour
        ("aws-trn2-48xl-use2-spot", 16, 23.0631),
        ("aws-inf2-48xl-use1-od", 12, 12.98127),  # 1.0818 per chip-hour
        ("aws-inf2-8xl-use1-od", 1, 1.96786),
    ],
)
def test_accelerator_offers_are_priced_per_chip_hour(offer_id, chips, node_usd):
    o = next(o for o in OFFERS if o.offer_id == offer_id)
    assert (o.gpus_per_node, o.price_per_node_hour_usd) == (chips, node_usd)
    assert o.price_per_gpu_hour_usd == pytest.approx(node_usd / chips, rel=1e-5)
    assert o.source and o.retrieved_date == "2026-12-01"
    assert o.layout_problem(min(chips, 8), 1) is None  # ICI / NeuronLink carry tensor parallel within the host


def test_every_accelerator_but_gaudi_3_has_an_on_demand_offer():
    """No public per-hour price for Gaudi 3 was found (IBM Cloud sells it without a listed rate in the sources
    read); it is in the catalog for memory, speed and Compare, and takes a price from your own file."""
    priced = {o.gpu for o in OFFERS if o.billing_model == "on_demand"}
    assert set(VENDOR) - priced == {"Gaudi3"}


# ---- the recommender: off by default, and allowing can change the pick -------------------------------------------


def test_the_pricing_field_link_key_and_cli_flag():
    assert Pricing().allow_accelerators is False
    inp = INPUTS["accel"]
    assert (inp.field, inp.default, inp.flag) == ("allow_accelerators", False, "--allow-accelerators")
    assert inp.parse("true") == (True, None) and inp.link_value(True) == "true"
    args = build_parser().parse_args(["plan", "--preset", "Llama-3.1-8B", "--allow-accelerators", "true"])
    assert scenario_from_args(args).pricing.allow_accelerators is True


def test_compare_b_side_can_pick_an_accelerator():
    b = INPUTS["b_gpu"]
    assert set(VENDOR) <= set(b.option_list())
    assert b.label_of("TPU-v6e") == "TPU v6e (Trillium)" and b.parse("TPU v6e (Trillium)") == ("TPU-v6e", None)


def test_the_filter_leaves_accelerators_out_unless_allowed_or_named():
    off = filter_offers(OFFERS, Pricing(), None, interactive=False)
    on = filter_offers(OFFERS, Pricing(allow_accelerators=True), None, interactive=False)
    assert off == GPU_ONLY and on == OFFERS
    named = filter_offers(OFFERS, Pricing(), "TPU v6e", interactive=False)  # Compare's B side on a TPU
    assert {o.offer_id for o in named} == {
        "gcp-tpu-v6e-8-usc1-od",
        "gcp-tpu-v6e-8-usc1-spot",
        "gcp-tpu-v6e-1-usc1-od",
        "gcp-tpu-v6e-1-usc1-spot",
    }


@pytest.mark.parametrize(
    "question, gpu_pick, accelerator_pick",
    [
        # 200,000 requests a day of Llama-3.1-70B on AWS: 8 x A100 (p4de) without, one trn2.48xlarge with
        (dict(preset="Llama-3.1-70B", requests_per_day=200_000, provider="aws"), "A100-80GB-SXM", "Trainium2"),
        # a 2M-request batch job of Llama-3.1-8B on GCP spot: an H100 without, a v6e-8 slice with
        (
            dict(preset="Llama-3.1-8B", requests_per_day=2_000_000, provider="gcp", serving="batch", billing="spot"),
            "H100-SXM",
            "TPU-v6e",
        ),
    ],
)
def test_allowing_accelerators_can_change_the_pick(question, gpu_pick, accelerator_pick):
    off = recommend(Scenario(**question), OFFERS).picks[0]
    on = recommend(Scenario(**question, allow_accelerators=True), OFFERS).picks[0]
    assert (off.gpu, on.gpu) == (gpu_pick, accelerator_pick)
    assert on.monthly_usd < off.monthly_usd
    assert on.error_band == "TTFT no comparable measurement, TPOT no comparable measurement"
    assert "measurements)" in off.error_band  # a GPU under traffic: the band of the published load sweeps
    said = [w for w in on.why if w.startswith("not a GPU")]
    assert len(said) == 1 and "no comparable published measurement" in said[0]
    assert not any(w.startswith("not a GPU") for w in off.why)


QUESTIONS = [
    dict(preset="Llama-3.1-8B"),
    dict(preset="Llama-3.1-70B", requests_per_day=200_000, provider="aws"),
    dict(preset="Llama-3.1-8B", requests_per_day=2_000_000, provider="gcp", serving="batch", billing="spot"),
    dict(params=7e9, mode="training", training_tokens=1e11, provider="gcp"),
]


@pytest.mark.parametrize("question", QUESTIONS)
def test_leaving_it_off_gives_the_plan_of_a_gpu_only_catalog(question):
    """With the flag off, the plan is the one the bundled offers gave before the accelerators' rows were added."""
    sc = Scenario(**question)
    assert recommend(sc, OFFERS).model_dump() == recommend(sc, GPU_ONLY).model_dump()


def test_a_one_chip_tpu_layout_rents_one_chip():
    """Cloud TPU is billed per chip-hour: a layout of one v6e chip rents the v6e-1 slice at 2.70 USD an hour, not a
    whole 8-chip host."""
    from gpuplan_core import api

    a = api.answer_report({"preset": "Llama-3.1-8B", "gpu": "TPU-v6e", "billing": "on_demand"})
    assert a.pick.offer_id == "gcp-tpu-v6e-1-usc1-od" and a.pick.gpus == a.pick.tp * a.pick.pp * a.pick.replicas
    assert a.pick.monthly_usd == pytest.approx(2.7 * a.pick.gpus * 730)
