"""memory/request.py: a scenario's memory question (its own parts, the lengths and batch the budget is taken at) and
the question at a pick's layout, checked against the budget they lead to (Llama-3.1-8B: 131,072 B of BF16 KV per
token = 2 x 32 layers x 8 KV heads x 128 x 2 B; 8,030,261,248 parameters)."""

import pytest

from gpuplan_core.memory.budget import memory_budget
from gpuplan_core.memory.request import memory_request, pick_request
from gpuplan_core.model.arch import kv_bytes_per_token, params_total
from gpuplan_core.scenario.scenario import Scenario
from tests.picks import pick

LLAMA_8B = 8_030_261_248
KV_PER_TOKEN = 2 * 32 * 8 * 128 * 2  # 131,072 B


def test_the_default_question_is_the_request_s_context_and_batch():
    """2,000 input + 300 output tokens at batch 8: the KV cache holds 2,300 tokens in 16-token blocks (2,304) per
    sequence: 131,072 x 2,304 x 8 = 2,415,919,104 B; BF16 weights 2 x 8,030,261,248 = 16,060,522,496 B."""
    sc = Scenario(preset="Llama-3.1-8B")
    r = memory_request(sc)
    assert (r.context_tokens, r.batch, r.prefill_tokens) == (2300, 8, 2000)
    assert (r.job.mode, r.job.method, r.parallelism.gpu, r.parallelism.cp) == ("inference", "full", None, 1)
    m = sc.model()
    assert (params_total(m), kv_bytes_per_token(m, 2)) == (LLAMA_8B, KV_PER_TOKEN)
    b = memory_budget(m, r)
    assert b.components["KV cache"] == KV_PER_TOKEN * 2304 * 8 == 2_415_919_104
    assert b.components["weights"] == 2 * LLAMA_8B == 16_060_522_496


def test_the_largest_batch_is_asked_at_one_sequence_and_a_batch_argument_wins():
    sc = Scenario(preset="Llama-3.1-8B", batch="max")
    assert memory_request(sc).batch == 1
    assert memory_request(sc, batch=32).batch == 32
    assert memory_budget(sc.model(), memory_request(sc, batch=32)).components["KV cache"] == KV_PER_TOKEN * 2304 * 32


def test_flat_updates_go_to_their_part():
    r = memory_request(Scenario(preset="Llama-3.1-8B"), tp=2, gpus=2, kv_format="fp8", engine="sglang")
    assert (r.parallelism.tp, r.parallelism.gpus, r.formats.kv_format, r.runtime.engine) == (2, 2, "fp8", "sglang")
    b = memory_budget(Scenario(preset="Llama-3.1-8B").model(), r)
    assert b.components["weights"] == LLAMA_8B  # BF16 over tp 2: 2 B x params / 2


def test_training_keeps_its_context_parallel_and_sequence_and_reads_no_prompt():
    sc = Scenario(preset="Llama-3.1-8B", mode="training", gpus=16, tp=2, cp=2, zero_stage=3)
    r = memory_request(sc)
    assert (r.context_tokens, r.prefill_tokens, r.parallelism.cp, r.dp) == (4096, None, 2, 4)  # 16 / (2 x 2)


def test_parameters_are_offloaded_only_at_zero_3_and_pre_training_trains_every_weight():
    sc = Scenario(
        preset="Llama-3.1-8B", mode="training", gpus=8, zero_stage=1, offload="optimizer+params", method="lora"
    )
    r = memory_request(sc)
    assert (r.parallelism.offload, r.job.method) == ("optimizer", "full")
    ft = memory_request(Scenario(preset="Llama-3.1-8B", mode="finetune", method="qlora"))
    assert ft.job.method == "qlora"


def test_the_question_at_an_inference_pick_is_one_replica_in_its_format():
    """Six replicas of TP 2 in FP8: one replica's question, 2 GPUs; the body at 1 B per weight over tp 2."""
    sc = Scenario(preset="Llama-3.1-8B")
    r = pick_request(sc, pick(gpus=12, tp=2, weights_format="fp8", replicas=6))
    assert (r.parallelism.tp, r.parallelism.pp, r.parallelism.gpus, r.formats.weights_format) == (2, 1, 2, "fp8")
    assert memory_budget(sc.model(), r).components["KV cache"] == KV_PER_TOKEN * 2304 * 8 / 2  # KV heads split by tp


def test_the_question_at_a_training_pick_is_its_layout_stage_micro_batch_and_recompute():
    sc = Scenario(preset="Llama-3.1-8B", mode="training", gpus=16, zero_stage=1, recompute="full")
    r = pick_request(sc, pick(gpus=16, tp=2, zero_stage=3, micro_batch=2, recompute="selective"))
    assert (r.parallelism.gpus, r.parallelism.tp, r.parallelism.zero_stage, r.dp) == (16, 2, 3, 8)
    assert (r.batch, r.training.recompute) == (2, "selective")
    zero3 = memory_budget(sc.model(), r).budgets["model states"]
    assert zero3 == pytest.approx(16 * LLAMA_8B / 16)  # ZeRO paper 16 B/param, tp 2 x dp 8 share them


def test_a_training_pick_whose_count_is_not_a_multiple_of_tp_x_pp_budgets_one_group():
    """12 GPUs (whole nodes) at tp 8: 12 is not a multiple of 8, so one tp x pp group of 8 is budgeted."""
    sc = Scenario(preset="Llama-3.1-8B", mode="training", gpus=16, zero_stage=2, recompute="full")
    r = pick_request(sc, pick(gpus=12, tp=8, micro_batch=1))
    assert (r.parallelism.gpus, r.parallelism.tp, r.dp) == (8, 8, 1)
    assert (r.parallelism.zero_stage, r.training.recompute) == (2, "full")  # the pick chose neither: the scenario's


def test_a_serving_question_keeps_an_moe_models_ep_and_an_ep_pick_carries_its_own():
    """A serving budget runs expert parallel where the user set it for an MoE model (one replica of 4 GPUs at tp 1,
    ep 4; a dense model's ep is dropped) or at a pick the layout search made (``pick_request``: 8 GPUs at tp 1,
    ep 8), so the Memory page's budget is the one the search sized."""
    from gpuplan_core.memory.request import memory_request, pick_request
    from gpuplan_core.results.plan import Pick
    from gpuplan_core.scenario.scenario import Scenario

    sc = Scenario(preset="Mixtral-8x7B-v0.1", ep=4)
    par = memory_request(sc).parallelism
    assert (par.ep, par.tp, par.pp, par.gpus) == (4, 1, 1, 4)
    assert memory_request(Scenario(preset="Llama-3.1-8B", ep=4)).parallelism.ep is None
    pick = Pick(
        gpu="H100-SXM",
        weights_format="bf16",
        offer_id="o",
        provider="p",
        product="x",
        billing_model="on_demand",
        gpus=8,
        nodes=1,
        tp=1,
        pp=1,
        ep=8,
        layout="8 x H100-SXM, EP 8 (attention DP)",
        replicas=1,
        monthly_usd=1.0,
        run_cost_usd=None,
        price_per_gpu_hour_usd=1.0,
        misses=[],
        why=[],
        source="s",
        price_as_of=None,
    )
    req = pick_request(sc, pick)
    assert (req.parallelism.tp, req.parallelism.ep, req.parallelism.gpus, pick.replica_gpus) == (1, 8, 8, 8)
