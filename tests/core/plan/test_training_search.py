"""The training search (plan/training_search.py): ZeRO stage x tp x pp x micro-batch chosen together for the cheapest
run, a stage set kept with the cheaper one stated, the micro-batch the largest that fits, the default deadline of a
run without a count or deadline, and messages that name the real cause."""

import pytest

from gpuplan_core import api
from gpuplan_core.interface.inputs import INPUTS, to_scenario
from gpuplan_core.interface.links import link_query
from gpuplan_core.model.arch import params_total
from gpuplan_core.perf.training_step import fitted_efficiency
from gpuplan_core.plan.training_search import training_candidates
from gpuplan_core.plan.training_tried import search_step
from gpuplan_core.pricing.csv_file import load_pricing

OFFERS = {o.offer_id: o for o in load_pricing().offers}
P5 = OFFERS["aws-p5-48xl-use1-spot"]  # 8 x H100 SXM per machine, EFA at 3,200 Gbit/s (400 per GPU)
ISSUE = {"workload": "pretrain", "src": "size", "tokens_b": 1000.0, "gpu": "H100-SXM", "gpus": 64}


def _sc(**inputs):
    sc, notes = to_scenario(inputs)
    assert not notes, notes
    return sc


def _cands(sc, offers):
    cands, rejected, _ = training_candidates(sc.model(), sc, offers)
    return cands, rejected


def test_the_zero_stage_is_searched_by_default_and_a_stage_set_is_kept():
    assert INPUTS["zero"].default == "auto"
    auto, three = _sc(**ISSUE), _sc(**ISSUE, zero=3)
    assert (auto.parallelism.zero_auto, three.parallelism.zero_auto, three.parallelism.zero_stage) == (True, False, 3)
    assert "zero=3" in link_query({**ISSUE, "zero": 3}) and "zero" not in link_query(ISSUE)  # the default: unwritten
    for z in (0, 1, 2, 3):  # every old link value still reads as that stage, set
        assert api.plan_report(_sc(**ISSUE, zero=z)).picks[0].zero_stage == z


def test_the_issue_question_picks_at_or_below_the_cheapest_of_the_four_forced_stages():
    """7B on 1T tokens, 64 x H100: ZeRO-0 forced keeps a pipeline (PP 4) and its bubble; the search finds pure data
    parallel at ZeRO-2, no recompute, micro-batch 2, MFU 0.430 (issue 29: $152,741 then at ZeRO-0 with full recompute,
    $119,115 with the stage searched; $93,084 with the recompute searched too; $92,978 under the kernel-stack
    constants, where ZeRO-1 at micro-batch 2 needs PP 2 and ZeRO-3 ties ZeRO-2)."""
    forced = {z: api.plan_report(_sc(**ISSUE, zero=z)).picks[0] for z in (0, 1, 2, 3)}
    pick = api.plan_report(_sc(**ISSUE)).picks[0]
    assert pick.run_cost_usd <= min(p.run_cost_usd for p in forced.values()) * (1 + 1e-9)
    assert (pick.gpus, pick.tp, pick.pp, pick.replicas) == (64, 1, 1, 64)
    assert pick.mfu == pytest.approx(0.430, abs=5e-4) and round(pick.run_cost_usd) == 92978
    assert (pick.zero_stage, pick.recompute, pick.micro_batch) == (2, "none", 2)
    assert forced[0].pp > 1 and forced[0].run_cost_usd > pick.run_cost_usd
    # the why names what was tried: ZeRO-0's best layout, what it loses on, the MFUs and the saving
    saving = 1 - pick.run_cost_usd / forced[0].run_cost_usd
    line = next(w for w in pick.why if w.startswith(f"ZeRO-{pick.zero_stage} over ZeRO-0"))
    assert f"no pipeline bubble, MFU {pick.mfu:.2f} vs {forced[0].mfu:.2f}, {saving:.0%} cheaper" in line
    # the stage set is kept, and the cheaper run is stated beside it
    beside = next(w for w in forced[0].why if "kept as set" in w)
    assert beside.startswith(f"ZeRO-{pick.zero_stage} would be {saving:.0%} cheaper: ")
    assert beside.endswith("ZeRO-0 is kept as set")


def _zero3_over_pp(gbit_per_node: float):
    """16 x H100 on two machines, 7B on 100B tokens, full recompute: the best ZeRO-3 and ZeRO-0 runs on a P5 whose
    network is ``gbit_per_node`` Gbit/s (ZeRO-3 sharded over all ranks), and the search's pick."""
    o = P5.model_copy(update={"inter_node_gbit_s": gbit_per_node})
    q = {"workload": "pretrain", "src": "size", "size_b": 7, "tokens_b": 100.0, "gpu": "H100-SXM", "gpus": 16}
    q["recompute"] = "full"  # the policy fixed: the stage against the pipeline alone
    plain = {"zero": 3, "hsdp": 0}  # ZeRO-3 over all 16 ranks (HSDP: test_training_hsdp.py)
    z3, z0, auto = (_cands(_sc(**q, **z), [o])[0][0] for z in (plain, {"zero": 0}, {}))
    return z3, z0, auto


def test_on_a_fast_network_zero3_beats_tensor_x_pipeline():
    z3, z0, auto = _zero3_over_pp(3200.0)
    # ZeRO-0 keeps a pipeline: PP 8 interleaved x4 (PP 4 x DP 4 before the schedule was searched)
    assert (z3.tp, z3.pp, z3.replicas) == (1, 1, 16) and (z0.tp, z0.pp, z0.replicas, z0.virtual_stages) == (1, 8, 2, 4)
    assert z3.run_cost_usd < z0.run_cost_usd and auto.run_cost_usd <= z3.run_cost_usd
    # hand check of ZeRO-3's data-parallel traffic: weights all-gathered for forward and backward per micro-batch
    # (2 x 2 bytes x params x m) + FP32 gradients reduce-scattered (4 bytes x params), x (g - 1) / g, over 400 Gbit/s
    # per GPU at the fitted network efficiency; compute hides the overlap share of the step's compute
    eff, st = fitted_efficiency(), z3.step
    n, m, g = params_total(_sc(workload="pretrain", src="size", size_b=7).model()), 8, 16
    assert 4 * 1024 * 1024 / (16 * z3.micro_batch * 4096) == m  # micro-batches per step: 4M tokens / (16 x 8 x 4,096)
    volume = (2 * 2.0 * n * m + 4.0 * n) * (g - 1) / g
    seconds = volume / (400 / 8 * 1e9 * eff.network_efficiency)
    compute = st.matmul_s + st.attention_s + st.elementwise_s + st.tensor_parallel_s + st.layer_overhead_s
    assert st.data_parallel_exposed_s == pytest.approx(max(0.0, seconds - eff.overlap * compute), rel=1e-9)
    assert seconds < eff.overlap * compute  # all hidden: no bubble, no exposed traffic


def test_on_a_slow_network_tensor_x_pipeline_beats_zero3():
    """At 400 Gbit/s per machine (50 per GPU, still an RDMA network that may couple machines), ZeRO-3 over 16 ranks
    exposes its gathers; its best layout falls back to a pipeline (PP 4 interleaved x4 x DP 4: with the interleaved
    schedule searched it is 0.4% cheaper than ZeRO-0's PP 8 x4; ZeRO-0's PP 2 x DP 8 was the cheaper under 1F1B), and
    the pick, ZeRO-2 over 16 ranks (one gradient all-reduce a step, hidden), is at or below both."""
    z3, z0, auto = _zero3_over_pp(400.0)
    assert (z3.pp, z3.virtual_stages) == (4, 4) and auto.run_cost_usd <= min(z0.run_cost_usd, z3.run_cost_usd)
    assert auto.zero_stage != 3
    eff = fitted_efficiency()
    n, m, g = params_total(_sc(workload="pretrain", src="size", size_b=7).model()), 8, 16
    seconds = (2 * 2.0 * n * m + 4.0 * n) * (g - 1) / g / (50 / 8 * 1e9 * eff.network_efficiency)
    st = z0.step  # ZeRO-3 at DP 16 would expose its traffic beyond what ZeRO-0's compute of a step hides
    compute = st.matmul_s + st.attention_s + st.elementwise_s + st.layer_overhead_s
    assert seconds - eff.overlap * compute > st.bubble_s


def test_qlora_on_one_l4_chooses_the_micro_batch_and_says_so():
    sc = _sc(workload="finetune", method="qlora", gpu="L4")  # no batch given: the default 8 does not fit an L4
    plan = api.plan_report(sc)
    p = plan.picks[0]
    assert (p.gpu, p.gpus, p.micro_batch) == ("L4", 1, 1)
    assert "micro-batch 1, not the default 8: the largest that fits this layout" in p.why  # no batch was given
    given = api.plan_report(_sc(workload="finetune", method="qlora", gpu="L4", batch=4)).picks[0]
    assert "micro-batch 1, not the 4 given: the largest that fits this layout" in given.why
    assert not any("deadline" in w for w in p.why) and plan.message is None
    ans = api.answer_report(sc)
    assert ans.pick.micro_batch == 1


def test_when_nothing_fits_the_message_names_memory_or_the_network_not_a_deadline():
    sc = _sc(workload="pretrain", src="size", size_b=405, tokens_b=100.0, gpu="L4")  # no L4 offer couples machines
    plan = api.plan_report(sc)
    assert not plan.picks and plan.message.startswith("No configuration fits: ")
    assert "fast RDMA network" in plan.message and "deadline" not in plan.message


def test_a_run_without_count_or_deadline_finishes_within_the_default_deadline_and_states_one_gpu():
    sc = _sc(workload="pretrain", src="size", tokens_b=1000.0)
    assert sc.training.default_deadline_hours == 720.0 and sc.training.deadline_hours is None
    plan = api.plan_report(sc)
    p = plan.picks[0]
    assert p.gpus > 1 and p.wall_hours <= 720.0
    one = next(w for w in p.why if w.startswith("the alternative: one GPU ("))
    offer = OFFERS[one.split("(", 1)[1].split(")", 1)[0]]  # the cheapest one-GPU offer of the pick's type
    assert offer.gpu == p.gpu
    grown = _cands(sc, [offer])[0][0]  # that offer's run, grown to one machine; its fewest GPUs beside it
    slow = grown.fewest  # 13,471 h on one B200
    assert slow.gpus == 1 and slow.wall_hours > 720.0
    assert (
        f"would take {slow.wall_hours:,.0f} h ({slow.wall_hours / 24:,.0f} days) for {slow.run_cost_usd:,.0f} USD"
        in one
    )
    # 0 = no default deadline: the fewest GPUs that hold the job, as before
    assert (
        api.plan_report(_sc(workload="pretrain", src="size", tokens_b=1000.0, default_deadline_h=0)).picks[0].gpus == 1
    )


def test_the_search_step_names_what_was_tried():
    sc = _sc(**ISSUE)
    cands, _ = _cands(sc, [P5])
    step = search_step(cands[0])
    assert step.label == "Layout searched" and step.value == "ZeRO-2, DP 64"
    head = "ZeRO-2 over ZeRO-0 (PP 8 (interleaved x4) x DP 8, micro-batch 2): no pipeline bubble, MFU 0.43 vs"
    assert step.detail.startswith(head)  # ZeRO-0's best: interleaved 1F1B, 4 chunks per stage
    assert (
        "; no recompute over full recompute (ZeRO-2, DP 64, micro-batch 8): no forward pass recomputed" in step.detail
    )
    chain = api.plan_report(sc).why  # the why-chain states it, after the GPUs
    labels = [w.label for w in chain]
    assert labels.index("Layout searched") == labels.index("GPUs") + 1
    assert chain[labels.index("Layout searched")].detail == step.detail


def test_the_recompute_policy_is_searched_with_the_layout_memory_against_speed():
    """The recompute (none, selective, full) is searched by default with the ZeRO stage, layout and micro-batch. On the
    issue's 64 x H100 question no recompute wins: it holds only smaller micro-batches (memory), but saves the
    recompute's extra forward pass (speed), and the pick is at or below each policy forced."""
    assert INPUTS["recompute"].default == "auto" and _sc(**ISSUE).training.recompute_auto  # searched unless set
    searched = _sc(**ISSUE, recompute="auto")  # the link's recompute=auto, now the default: unwritten
    assert searched == _sc(**ISSUE) and "recompute" not in link_query({**ISSUE, "recompute": "auto"})
    assert "recompute=" in link_query({**ISSUE, "recompute": "full"})  # a policy set is written, and kept
    assert not _sc(**ISSUE, recompute="full").training.recompute_auto
    forced = {r: api.plan_report(_sc(**ISSUE, recompute=r)).picks[0] for r in ("none", "selective", "full")}
    pick = api.plan_report(searched).picks[0]
    assert pick.run_cost_usd <= min(p.run_cost_usd for p in forced.values()) * (1 + 1e-9)
    assert pick.recompute == "none" and forced["full"].recompute == "full"
    assert pick.micro_batch < forced["full"].micro_batch  # no recompute holds fewer sequences per GPU
    line = next(w for w in pick.why if w.startswith("no recompute over full recompute ("))
    saving = 1 - pick.run_cost_usd / forced["full"].run_cost_usd
    assert line.endswith(f"{saving:.0%} cheaper") and f"MFU {pick.mfu:.2f} vs {forced['full'].mfu:.2f}" in line
    # the policy set is kept, with the cheaper one beside it
    kept = next(w for w in forced["full"].why if "kept as set" in w)
    assert kept.startswith("no recompute would be ") and kept.endswith("full recompute is kept as set")


def test_full_recompute_costs_one_more_forward_pass_of_the_matmuls_by_hand():
    """The step model: matmuls 2 forward + 4 backward passes, + 2 more with full recompute (8 / 6), selective half
    a forward (7 / 6); FlashAttention 1 + 2.5 passes, + 1 recomputed forward."""
    from gpuplan_core.perf.training_step import StepLayout, training_step

    m, gpu = _sc(**ISSUE).model(), OFFERS["aws-p5-48xl-use1-spot"].gpu
    from gpuplan_core.hardware.catalog import get_gpu

    steps = {
        r: training_step(m, get_gpu(gpu), StepLayout(gpus=64, zero_stage=1, recompute=r))
        for r in ("none", "selective", "full")
    }
    assert steps["full"].matmul_s / steps["none"].matmul_s == pytest.approx(8 / 6, rel=1e-12)
    assert steps["selective"].matmul_s / steps["none"].matmul_s == pytest.approx(7 / 6, rel=1e-12)
    assert steps["full"].attention_s / steps["none"].attention_s == pytest.approx(4.5 / 3.5, rel=1e-12)


def test_a_tensor_x_pipeline_layout_set_is_kept_and_the_cheaper_one_stated_beside_it():
    sc = _sc(**ISSUE, tp=2, pp=2)
    p = api.plan_report(sc).picks[0]
    free = api.plan_report(_sc(**ISSUE)).picks[0]  # nothing fixed: the search's own
    assert (p.tp, p.pp, p.recompute) == (2, 2, "none") and (free.tp, free.pp) == (1, 1)
    line = next(w for w in p.why if "kept as set" in w)
    saving = 1 - free.run_cost_usd / p.run_cost_usd
    # 10% (14% before the interleaved schedule was searched: TP 2 x PP 2 now runs interleaved x4, bubble / 4)
    assert line.startswith(f"TP 1 x PP 1 would be {saving:.0%} cheaper: ") and f"{saving:.0%}" == "10%"
    assert p.virtual_stages == 4 and "interleaved 1F1B x4 over zero-bubble ZB-H1 (" in " ".join(p.why)
    assert f"{free.run_cost_usd:,.0f} USD; TP 2 x PP 2 is kept as set" in line
    fixed = api.plan_report(_sc(**ISSUE, tp=2, pp=2, recompute="full")).picks[0]  # the policy set too: both kept
    assert fixed.recompute == "full"
    both = next(w for w in fixed.why if "kept as set" in w)
    assert both.startswith("no recompute with TP 1 x PP 1 would be ")
    assert both.endswith("full recompute and TP 2 x PP 2 are kept as set")
