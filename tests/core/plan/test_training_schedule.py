"""The pipeline schedule and expert parallel in the training search (plan/training_layout.py, training_search.py):
interleaved 1F1B where its bubble saves more than its activations and sends cost, 1F1B where the interleaved
schedule does not fit or its micro-batches do not divide by the stages, a schedule or EP set kept, and expert
parallel for a mixture of experts, each named in the why-chain."""

import pytest

from gpuplan_core.hardware.catalog import get_gpu
from gpuplan_core.interface.inputs import to_scenario
from gpuplan_core.interface.links import link_query
from gpuplan_core.memory.budget import memory_budget
from gpuplan_core.memory.fit import budget_bytes
from gpuplan_core.memory.request import memory_request
from gpuplan_core.plan.training_layout import PRE_TRAINING_GLOBAL_BATCH_TOKENS, TrainingShape
from gpuplan_core.plan.training_search import training_candidates
from gpuplan_core.pricing.csv_file import load_pricing

P5 = next(o for o in load_pricing().offers if o.offer_id == "aws-p5-48xl-use1-spot")  # 8 x H100, EFA 3,200 Gbit/s

H100 = get_gpu("H100-SXM")
# Llama-3.1-70B on 1T tokens, the layout and stage set: TP 4 x PP 4 at ZeRO-1, no recompute, micro-batch 1
L70 = dict(workload="pretrain", src="preset", model="Llama-3.1-70B", tokens_b=1000.0, gpu="H100-SXM")
L70 |= dict(zero=1, tp=4, pp=4, recompute="none", batch=1)


def _sc(**inputs):
    sc, notes = to_scenario(inputs)
    assert not notes, notes
    return sc


def _pick(**inputs):
    """The search's candidate on one P5 offer (the TrainingCandidate, with its step and why-chain)."""
    sc = _sc(**inputs)
    return training_candidates(sc.model(), sc, [P5])[0][0]


def test_the_schedule_and_ep_are_link_keys_searched_unless_set():
    sc = _sc(**L70, gpus=64)
    assert (sc.parallelism.virtual_stages, sc.parallelism.ep) == (None, None)  # searched
    assert "vpp=" not in link_query({**L70, "gpus": 64}) and "&ep=" not in link_query({**L70, "gpus": 64})
    set_ = _sc(**L70, gpus=64, vpp=2, ep=8)
    assert (set_.parallelism.virtual_stages, set_.parallelism.ep) == (2, 8)
    assert "&vpp=2" in link_query({**L70, "gpus": 64, "vpp": 2}) and "&ep=8" in link_query({**L70, "gpus": 64, "ep": 8})


def test_interleaved_wins_on_64_gpus_and_the_why_chain_names_it():
    """64 GPUs: DP 4, 4M tokens a step = 64 micro-batches of 4,096; the bubble (4 - 1) / 64 = 4.7% under 1F1B,
    (4 - 1) / (64 x 4) = 1.2% interleaved x4 (80 layers = 4 stages x 4 chunks x 5); its sends hide behind compute."""
    auto, one = _pick(**L70, gpus=64), _pick(**L70, gpus=64, vpp=1, pipe="1f1b")
    assert (auto.tp, auto.pp, auto.virtual_stages, one.virtual_stages) == (4, 4, 4, 1)
    assert auto.run_cost_usd < one.run_cost_usd
    assert auto.step.bubble_s / one.step.bubble_s == pytest.approx(1 / 4, rel=0.02)  # the same compute, bubble / v
    line = next(w for w in auto.why if w.startswith("interleaved 1F1B x4 over zero-bubble ZB-H1 ("))
    assert "a smaller pipeline bubble" in line and line.endswith("cheaper")
    assert any(w.startswith("1F1B: not tried, never cheaper than zero-bubble ZB-H1") for w in auto.why)
    assert one.run_cost_usd > _pick(**L70, gpus=64, pipe="zb-h1").run_cost_usd  # dominated, as the line says
    assert "interleaved 1F1B x4" in auto.why[0] and "PP 4 (interleaved x4)" in auto.label


def test_1f1b_where_interleaving_does_not_fit_memory():
    """32 GPUs (DP 2): at ZeRO-1 the optimizer states shard over 2 ranks; 1F1B fits an H100, but interleaving holds
    1 + 3 / (4 x 2) = 1.375x (v = 2) or 1.1875x (v = 4) the activations and does not."""
    pick = _pick(**L70, gpus=32)
    assert (pick.gpus, pick.tp, pick.pp, pick.virtual_stages) == (32, 4, 4, 1)
    cap = budget_bytes(H100, memory_request(_sc(**L70, gpus=32)).runtime)
    m = _sc(**L70, gpus=32).model()
    need = {v: memory_budget(m, memory_request(_sc(**L70, gpus=32, vpp=v))).per_gpu_bytes for v in (1, 2, 4)}
    assert need[1] <= cap < min(need[2], need[4])


def test_interleaving_needs_micro_batches_divisible_by_the_stages():
    """Megatron-Core's interleaved schedule runs only where the micro-batches per step divide by pp: 4M tokens at
    micro-batch 8 over DP 64 are 2 micro-batches, not a multiple of PP 4; over DP 16 they are 8."""
    s = TrainingShape(1, 1, 4, 1, micro_batch=8, virtual_stages=2, batch_tokens=PRE_TRAINING_GLOBAL_BATCH_TOKENS)
    assert PRE_TRAINING_GLOBAL_BATCH_TOKENS / (64 * 8 * 4096) == 2 and not s.holds(4 * 64)
    assert PRE_TRAINING_GLOBAL_BATCH_TOKENS / (16 * 8 * 4096) == 8 and s.holds(4 * 16)
    assert TrainingShape(1, 1, 4, 1, micro_batch=8, virtual_stages=1, batch_tokens=4 * 2**20).holds(4 * 64)


MIXTRAL = dict(workload="pretrain", src="preset", model="Mixtral-8x7B-v0.1", tokens_b=1000.0, gpu="H100-SXM")
MIXTRAL |= dict(gpus=64, zero=1, recompute="none", batch=1)


def test_expert_parallel_lets_mixtral_drop_its_pipeline_and_says_so():
    """At ZeRO-1 Mixtral's 93 GB of BF16 weights (and as many gradients) do not fit an H100 without a pipeline; EP 8
    holds 1 / 8 of the routed experts (14.5 GB of weights), so DP 64 runs with no bubble."""
    pick, no_ep = _pick(**MIXTRAL), _pick(**MIXTRAL, ep=1)
    assert (pick.ep, pick.pp) == (8, 1) and no_ep.pp > 1 and pick.run_cost_usd < no_ep.run_cost_usd
    line = next(w for w in pick.why if w.startswith("EP 8 over EP 1 ("))
    assert "no pipeline bubble" in line
    assert "(EP 8)" in pick.label and ", EP 8," in pick.why[0]


LONG = dict(workload="pretrain", src="preset", model="Llama-3.1-8B", tokens_b=100.0, gpu="H100-SXM", gpus=64)


def test_context_parallel_is_searched_for_long_sequences_and_named_when_it_wins():
    """131,072-token sequences: CP 4 splits each over 4 GPUs (a quarter of the activations each, ring attention's
    key/value passes added) and wins over CP 1, which holds them only by recomputing; at 4,096 tokens CP is not
    tried."""
    long_, short = _pick(**LONG, ctx=131072), _pick(**LONG)
    assert long_.cp == 4 and short.cp == 1
    assert long_.replicas == 64 // (long_.tp * long_.pp * 4)
    assert any(w.startswith("CP 4 over CP 1 (") for w in long_.why) and ", CP 4," in long_.why[0]
    assert not any(w.startswith("CP ") for w in short.why)
    kept = _pick(**LONG, ctx=131072, cp=2)  # a CP set is kept
    assert kept.cp == 2


def test_zero_bubble_is_a_link_key_searched_unless_set_and_runs_one_chunk_per_stage():
    assert _sc(**L70, gpus=32).parallelism.pipeline_schedule is None  # searched
    assert "pipe=" not in link_query({**L70, "gpus": 32})
    assert "&pipe=ZB-H1" in link_query({**L70, "gpus": 32, "pipe": "zb-h1"})
    assert _sc(**L70, gpus=32, pipe="zb-h1").parallelism.pipeline_schedule == "zb-h1"
    _, notes = to_scenario({**L70, "gpus": 32, "pipe": "zb-h1", "vpp": 2})
    assert notes and any("zb-h1 runs one model chunk per stage" in n for n in notes)


def test_zero_bubble_wins_where_interleaving_does_not_fit_with_the_memory_of_1f1b():
    """32 GPUs (DP 2): interleaving does not fit (test above); ZB-H1 holds 1F1B's activations, so it fits where 1F1B
    does, and its bubble is 3 / m x (compute - 2 W) against 1F1B's 3 / m x compute: W, the weight-gradient matmuls,
    a third of the matmuls without recompute."""
    auto, one = _pick(**L70, gpus=32), _pick(**L70, gpus=32, pipe="1f1b")
    assert (auto.tp, auto.pp, auto.virtual_stages, auto.pipeline_schedule) == (4, 4, 1, "zb-h1")
    assert (one.tp, one.pp, one.virtual_stages, one.pipeline_schedule) == (4, 4, 1, "1f1b")
    a, o = auto.step, one.step
    compute = o.matmul_s + o.attention_s + o.elementwise_s + o.tensor_parallel_s + o.layer_overhead_s
    assert o.bubble_s == pytest.approx(compute * 3 / (o.tokens_per_step / (2 * 4096)), rel=1e-9)  # m per rank
    assert a.bubble_s == pytest.approx(o.bubble_s * (compute - 2 * o.matmul_s / 3) / compute, rel=1e-9)
    assert auto.run_cost_usd < one.run_cost_usd
    m = _sc(**L70, gpus=32).model()
    need = {s: memory_budget(m, memory_request(_sc(**L70, gpus=32, pipe=s))).per_gpu_bytes for s in ("1f1b", "zb-h1")}
    assert need["zb-h1"] == need["1f1b"]
    assert any(w.startswith("1F1B: not tried, never cheaper than zero-bubble ZB-H1") for w in auto.why)
    assert "zero-bubble ZB-H1" in auto.why[0] and "PP 4 (zero bubble)" in auto.label
