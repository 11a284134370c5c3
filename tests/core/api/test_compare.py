"""api/compare.py: each side of a comparison is the answer to its scenario. A hand-made answer shows what a side
reads of it (the pick's GPUs, layout in words, latency, price, energy; without a pick, why not and the memory engine's
need); two real comparisons show each side equal to its own answer and B's count following A's only while it runs."""

from types import SimpleNamespace

import pytest

from gpuplan_core.api.compare import _pinned, _split, compare_report, compare_side
from gpuplan_core.api.cost import answer_report
from gpuplan_core.common.units import GiB
from gpuplan_core.scenario.scenario import Scenario
from tests.picks import pick

L8 = dict(preset="Llama-3.1-8B")


def _answer(p, per_gpu_bytes=20e9, message=None, energy=None):
    return SimpleNamespace(pick=p, memory_per_gpu_bytes=per_gpu_bytes, message=message, energy=energy)


@pytest.mark.parametrize(
    "fields,words",
    [
        ({}, None),  # the search chose freely
        ({"gpu": "H100-SXM"}, "H100 SXM"),
        ({"gpu": "H100-SXM", "gpus": 8}, "8 x H100 SXM"),
        ({"gpu": "l4", "gpus": 1200}, "1,200 x L4"),  # an alias, and the count with its thousands separator
    ],
)
def test_what_the_user_pinned_in_words(fields, words):
    assert _pinned(Scenario(**L8, **fields)) == words


@pytest.mark.parametrize(
    "p,words",
    [
        (pick(), "one GPU"),
        (pick(gpus=12, tp=2, replicas=6), "6 replicas of 2 GPUs (TP 2)"),
        (pick(gpus=4, tp=2, pp=2), "4 GPUs (TP 2, PP 2)"),
        (pick(gpus=2400, tp=2, replicas=1200), "1,200 replicas of 2 GPUs (TP 2)"),
    ],
)
def test_how_a_serving_pick_splits_its_gpus(p, words):
    assert _split(Scenario(**L8), p) == words


def test_how_a_training_pick_splits_its_gpus_is_its_memory_question_s_layout():
    """16 GPUs at TP 2, ZeRO-3 as the search chose it: DP = 16 / 2 = 8."""
    sc = Scenario(**L8, mode="training", gpus=16, zero_stage=1)
    assert _split(sc, pick(gpus=16, tp=2, zero_stage=3, micro_batch=2)) == "TP 2 x PP 1 x DP 8, ZeRO-3"


def test_a_serving_side_reads_the_answer_s_pick_memory_latency_price_and_energy():
    energy = SimpleNamespace(monthly_energy_kwh=500.0, monthly_co2_kg=150.0, energy_kwh_per_million_output_tokens=0.5)
    p = pick(gpus=2, tp=2, ttft_s=0.4, tpot_s=0.02, output_cost_per_million_usd=3.2, monthly_usd=2920.0)
    side = compare_side(Scenario(**L8), offers=None, answer=_answer(p, 30e9, energy=energy))
    assert side.label == "2 x H100 SXM, 2 GPUs (TP 2), BF16 weights, BF16 KV cache, batch 8"
    assert side.settings["Layout"] == "2 GPUs (TP 2)" and side.fits and side.per_gpu_bytes == 30e9
    assert (side.gpu, side.gpus, side.ttft_s, side.tpot_s) == ("H100-SXM", 2, 0.4, 0.02)
    assert (side.monthly_usd, side.per_million_usd, side.run_usd) == (2920.0, 3.2, None)
    assert (side.energy_kwh, side.co2_kg, side.kwh_per_million) == (500.0, 150.0, 0.5)
    assert (side.how, side.pinned) == ("the answer: the layout search's pick", False)


def test_one_gpu_is_left_out_of_the_label_and_a_pinned_side_says_so():
    side = compare_side(Scenario(**L8, gpu="H100-SXM"), None, _answer(pick(weights_format="fp8")))
    assert side.label == "1 x H100 SXM, FP8 (E4M3) weights, BF16 KV cache, batch 8"
    assert (side.how, side.pinned) == ("pinned to H100 SXM: the layout search on that GPU", True)


def test_a_training_side_reads_the_run_s_cost_and_energy():
    sc = Scenario(**L8, mode="training", gpus=16, zero_stage=1, batch=2)
    energy = SimpleNamespace(energy_kwh=44.0, co2_kg=14.0)
    p = pick(gpus=16, tp=2, zero_stage=1, micro_batch=2, run_cost_usd=210.0, monthly_usd=None)
    side = compare_side(sc, None, _answer(p, energy=energy))
    assert side.label == "16 x H100 SXM, TP 2 x PP 1 x DP 8, ZeRO-1, BF16 weights, micro-batch 2"
    assert (side.run_usd, side.monthly_usd, side.energy_kwh, side.co2_kg, side.kwh_per_million) == (
        210.0,
        None,
        44.0,
        14.0,
        None,
    )


def test_a_side_without_a_pick_says_why_and_shows_the_memory_engine_s_need():
    """Llama-3.1-8B at batch 8 of 2,300 tokens on one GPU: BF16 weights 16,060,522,496 B + KV 131,072 x 2,304 x 8 =
    2,415,919,104 + vLLM's workspace 2,023,751,680 + CUDA graphs 1 GiB + CUDA context 0.25 GiB."""
    side = compare_side(Scenario(**L8), None, _answer(None, message="nothing meets the 2 s target"))
    need = 16_060_522_496 + 2_415_919_104 + 2_023_751_680 + 1.25 * GiB
    assert (side.fits, side.per_gpu_bytes, side.needs) == (False, need, "nothing meets the 2 s target")
    assert side.settings["GPUs"] == "any GPU" and side.gpus is None and side.monthly_usd is None
    quiet = compare_side(Scenario(**L8, gpu="L4"), None, _answer(None))
    assert quiet.needs == "no configuration fits and meets the targets" and quiet.settings["GPUs"] == "L4"


def test_each_side_is_the_answer_to_its_own_scenario(offers):
    a = Scenario(**L8, gpu="H100-SXM")
    b = a.with_(gpu="H200")
    r = compare_report(a, b, offers)
    for side, sc in ((r.a, a), (r.b, b)):
        ans = answer_report(sc, offers=offers)
        assert (side.gpu, side.gpus, side.monthly_usd) == (ans.pick.gpu, ans.pick.gpus, ans.pick.monthly_usd)
        assert (side.ttft_s, side.tpot_s, side.per_gpu_bytes) == (
            ans.pick.ttft_s,
            ans.pick.tpot_s,
            ans.memory_per_gpu_bytes,
        )
    assert (r.a.gpu, r.b.gpu, r.notes) == ("H100-SXM", "H200", [])


@pytest.fixture(scope="module")
def on_l4(offers):
    """A: Llama-3.1-8B pinned to 2 x H100 SXM at tp 1; B: the same on L4. 2 x L4 at tp 1 is two replicas of one L4,
    which cannot hold the 21.8 GB the model needs at batch 8; the search on L4 finds TP 2."""
    a = Scenario(**L8, gpu="H100-SXM", gpus=2)
    return compare_report(a, a.with_(gpu="L4"), offers)


def test_b_s_count_follows_a_s_only_while_it_runs(on_l4):
    assert on_l4.b.fits and on_l4.b.settings["Layout"] == "2 GPUs (TP 2)" and on_l4.b.gpu == "L4"
    assert on_l4.notes == [
        "B: A's layout (2 GPUs, TP 1) does not run on the L4; B is the search on that GPU at the layout it chooses "
        "(2 x L4, 2 GPUs (TP 2))."
    ]


def test_the_note_does_not_say_nothing_runs_on_the_count_b_then_runs(on_l4):
    assert on_l4.b.settings["GPUs"] not in on_l4.notes[0].split(";")[0]


def test_a_side_pinned_to_a_count_runs_that_count(on_l4):
    assert on_l4.a.how.startswith("pinned to 2 x H100 SXM")
    assert on_l4.a.gpus == 2
