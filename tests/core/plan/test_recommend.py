"""The recommender (plan.py, search.py): every layout searched, the interconnect respected, the count explained."""

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuplan_core import api
from gpuplan_core.plan.deploy import skypilot_yaml, vllm_args, vllm_command
from gpuplan_core.plan.recommend import recommend
from gpuplan_core.pricing.csv_file import load_pricing
from gpuplan_core.results.plan import Plan
from gpuplan_core.scenario.scenario import Scenario

ROOT = Path(__file__).resolve().parents[3]
OFFERS = {o.offer_id: o for o in load_pricing().offers}
QUESTION = dict(
    preset="Llama-3.1-70B",
    requests_per_day=50_000,
    input_tokens=2000,
    output_tokens=300,
    ttft_target_s=2.0,
    tpot_target_s=0.1,
)


def _multiplies_out(plan: Plan) -> None:
    """The why-chain's numbers give the shown cost: ceil(peak / capacity) replicas, GPUs x price x hours."""
    p = plan.picks[0]
    o = OFFERS[p.offer_id]
    peak = 50_000 / 86_400 * 3.0
    assert p.replicas == math.ceil(peak / p.requests_per_s_per_replica)
    need = p.replicas * p.tp * p.pp
    paid = math.ceil(need / o.gpus_per_node - 1e-9) * o.gpus_per_node  # whole nodes where rented whole
    assert p.gpus == paid
    if not o.is_serverless:
        assert p.monthly_usd == pytest.approx(p.gpus * o.price_per_gpu_hour_usd * 730, rel=1e-9)
    steps = {w.label: w.value for w in plan.why}
    assert steps["Requests per day"] == "50,000" and steps["Peak requests per second"] == f"{peak:,.2f}"
    assert steps["Replicas"] == f"{p.replicas:,}"
    assert steps["Monthly cost"] == f"${p.monthly_usd:,.0f}"  # as the headline writes it


def test_the_70b_question_gets_an_answer_without_setting_gpus_or_tensor_parallel():
    """Llama-3.1-70B, 50,000 requests a day, 2,000 in / 300 out, first token within 2 s: a pick, with tensor
    parallel inside one machine of its offer, and a why-chain that multiplies out to the cost."""
    plan = api.plan_report(QUESTION)
    assert plan.picks, plan.message
    for p in plan.picks:
        o = OFFERS[p.offer_id]
        assert p.tp <= o.machine_gpus and (p.tp <= 2 or o.intra_node_link == "NVLink")
        assert p.weights_format == "bf16"  # the format asked for: no FP8 unless explored
        assert p.ttft_s <= 2.0 and p.tpot_s <= 0.1 and p.layout.startswith(f"{p.tp * p.pp} x {p.gpu}, TP {p.tp}")
    _multiplies_out(plan)
    assert [q.monthly_usd for q in plan.pareto] == sorted(q.monthly_usd for q in plan.pareto)  # cheapest first
    assert all(a.ttft_s > b.ttft_s for a, b in zip(plan.pareto, plan.pareto[1:], strict=False))  # each one faster


def test_the_70b_question_on_the_cli():
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "gpuplan_core",
            "plan",
            "--preset",
            "Llama-3.1-70B",
            "--requests-per-day",
            "50000",
            "--input-tokens",
            "2000",
            "--output-tokens",
            "300",
            "--ttft-target-s",
            "2",
            "--tpot-target-s",
            "0.1",
            "--json",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert {"picks", "near_misses", "rejected", "why", "pareto", "message", "unit"} <= set(out)
    top = out["picks"][0]
    assert {"nodes", "layout", "tp", "pp", "replicas", "gpus", "monthly_usd", "price_per_gpu_hour_usd"} <= set(top)
    _multiplies_out(Plan.model_validate(out))


def test_an_explicit_weights_format_is_the_only_one_searched_unless_explored():
    sc = Scenario(**QUESTION)
    strict = recommend(sc, list(OFFERS.values()))
    assert {p.weights_format for p in strict.picks + strict.near_misses} == {"bf16"}
    explored = recommend(sc, list(OFFERS.values()), explore_formats=True)
    assert {p.weights_format for p in explored.picks + explored.near_misses} & {"fp8", "int4-g128"}
    cli = subprocess.run(
        [
            sys.executable,
            "-m",
            "gpuplan_core",
            "plan",
            "--preset",
            "Llama-3.1-8B",
            "--weights-format",
            "bf16",
            "--json",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert {p["weights_format"] for p in json.loads(cli.stdout)["picks"]} == {"bf16"}


def test_a_chosen_gpu_restricts_the_picks():
    plan = api.plan_report({**QUESTION, "gpu": "H200"})
    assert plan.picks and {p.gpu for p in plan.picks + plan.near_misses} == {"H200"}
    train = api.plan_report({"params": 7_000_000_000, "mode": "training", "gpu": "A100-80GB-SXM", "zero_stage": 3})
    assert train.picks and {p.gpu for p in train.picks} == {"A100-80GB-SXM"}


def test_training_on_any_gpu_lists_the_cheapest_per_gpu_type():
    plan = api.plan_report({"params": 7_000_000_000, "mode": "training", "zero_stage": 3})
    gpus = [p.gpu for p in plan.picks]
    assert len(gpus) == len(set(gpus)) > 1


def test_training_fits_the_complete_budget_at_the_chosen_zero_stage_or_the_lowest_above_it(monkeypatch):
    # ZeRO-0: 70B's model states (16 B/param) fit no single GPU, so the layout splits the model (TP x PP)
    plan = api.plan_report({"params": 70_000_000_000, "mode": "training", "zero_stage": 0, "gpu": "H100-SXM"})
    p = plan.picks[0]
    assert p.zero_stage == 0 and p.tp * p.pp > 1 and f"ZeRO-0, TP {p.tp}, PP {p.pp}" in p.why[0]
    # when a stage fits no layout at all, the next one up is used, and the pick says so
    import gpuplan_core.plan.training_layout as plan_mod

    real = plan_mod.layout_table
    monkeypatch.setattr(
        plan_mod, "layout_table", lambda m, req, n, *pp: [] if req.parallelism.zero_stage < 2 else real(m, req, n, *pp)
    )

    p = api.plan_report({"params": 70_000_000_000, "mode": "training", "zero_stage": 0, "gpu": "H100-SXM"}).picks[0]
    assert p.zero_stage == 2 and any("ZeRO-2: at ZeRO-0 the model states do not fit this GPU" in w for w in p.why)


def test_nothing_qualifies_names_the_binding_constraint_with_numbers():
    plan = api.plan_report({**QUESTION, "input_tokens": 100_000, "output_tokens": 100, "ttft_target_s": 0.5})
    assert not plan.picks
    assert "-token prompt alone prefills in" in plan.message and "is not reachable with these GPUs" in plan.message


offer_ids = sorted(OFFERS)


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)  # each example a search (CI time)
@given(
    st.sampled_from(["Llama-3.1-8B", "Llama-3.1-70B", "Qwen2.5-72B", "Mixtral-8x7B-v0.1", "Llama-3.1-405B"]),
    st.sampled_from(["bf16", "fp8"]),
    st.sampled_from([None, 1_000, 100_000, 2_000_000]),
    st.sampled_from(["inference", "training"]),
    st.integers(500, 30_000),
)
def test_no_pick_puts_tensor_parallel_across_machines_or_couples_machines_without_a_fast_network(
    model, fmt, rpd, mode, prompt
):
    sc = Scenario(
        preset=model,
        weights_format=fmt,
        requests_per_day=rpd,
        mode=mode,
        input_tokens=prompt,
        output_tokens=200,
        ttft_target_s=None,
        tpot_target_s=None,
        zero_stage=3 if mode == "training" else 0,
    )
    plan = recommend(sc, list(OFFERS.values()))
    for p in plan.picks + plan.near_misses:
        o = OFFERS[p.offer_id]
        assert p.tp <= o.machine_gpus, p  # tensor parallel inside one machine
        assert p.tp <= 2 or o.intra_node_link == "NVLink", p  # above 2 only over NVLink
        if p.pp > 1 and (mode == "inference" or p.gpus > o.machine_gpus):  # a training pipeline may sit in one machine
            assert o.fast_network and not o.is_serverless, p  # stages across machines need a fast network
        if mode == "training" and p.gpus > o.machine_gpus:
            assert o.fast_network, p  # a coupled job across machines
        if mode == "inference" and not o.is_serverless:
            per_machine = o.machine_gpus if o.gpus_per_node == 1 else o.gpus_per_node
            assert p.tp * p.pp <= per_machine * max(1, p.pp), p


def _pick(**kw):
    return api.plan_report({**QUESTION, **kw}).picks[0]


def test_the_vllm_command_matches_the_pick():
    sc = Scenario(**{**QUESTION, "kv_format": "fp8", "memory_utilization": 0.85})
    pick = recommend(sc, list(OFFERS.values())).picks[0]
    args = vllm_args(sc, pick, max_num_seqs=256)
    flags = dict(zip(args[3::2], args[4::2], strict=True))
    assert args[:3] == ["vllm", "serve", "meta-llama/Llama-3.1-70B-Instruct"]
    assert flags["--tensor-parallel-size"] == str(pick.tp)
    assert flags["--pipeline-parallel-size"] == str(pick.pp)
    assert flags["--max-model-len"] == "2300"  # input + output tokens
    assert flags["--gpu-memory-utilization"] == "0.85"
    assert flags["--kv-cache-dtype"] == "fp8"
    assert flags["--max-num-seqs"] == "256"
    assert "--quantization" not in flags  # bf16 weights
    fp8 = Scenario(**{**QUESTION, "weights_format": "fp8"})
    fp8_pick = recommend(fp8, list(OFFERS.values())).picks[0]
    assert "--quantization fp8" in vllm_command(fp8, fp8_pick)


def test_the_skypilot_task_parses_and_names_the_same_accelerators_and_nodes():
    sc = Scenario(**{**QUESTION, "preset": "Llama-3.1-405B", "gpu": "H100-SXM"})
    plan = recommend(sc, list(OFFERS.values()))
    for pick in plan.picks[:3]:
        task = yaml.safe_load(skypilot_yaml(sc, pick))
        gpu, count = task["resources"]["accelerators"].split(":")
        assert gpu == "H100" and int(count) * task["num_nodes"] == pick.tp * pick.pp
        assert task["num_nodes"] == pick.pp
        assert f"--tensor-parallel-size {pick.tp}" in task["run"]
        assert f"--pipeline-parallel-size {pick.pp}" in task["run"]


def test_the_search_is_fast_enough_to_cache_per_scenario():
    """Not a timing assertion (bench/bench_core.py prints the time); the search stays a bounded space."""
    plan = api.plan_report({**QUESTION, "requests_per_day": 500_000})
    assert plan.candidates < 400


def test_the_offer_filter_takes_only_the_pricing_part():
    """filter_offers reads the Pricing part, the GPU type and whether serving is interactive: testable alone."""
    from gpuplan_core.plan.cost import filter_offers
    from gpuplan_core.scenario.deployment import Pricing

    offers = load_pricing().offers
    spot = [o for o in offers if o.interruptible]
    assert spot  # the bundled catalog has spot offers
    interactive = filter_offers(offers, Pricing(), None, interactive=True)
    assert not {o.offer_id for o in spot} & {o.offer_id for o in interactive}  # a reclaimed server drops live users
    every = Pricing(allow_accelerators=True)  # TPU / Trainium / Inferentia spot offers too
    assert {o.offer_id for o in spot} <= {o.offer_id for o in filter_offers(offers, every, None, False)}
    asked = filter_offers(offers, every.model_copy(update={"billing": "spot"}), None, interactive=True)
    assert {o.offer_id for o in asked} == {o.offer_id for o in offers if o.billing_model == "spot"}
    h100 = filter_offers(offers, Pricing(provider="aws"), "H100", interactive=False)
    assert h100 and all(o.provider == "aws" and o.gpu == "H100-SXM" for o in h100)


def test_the_cost_tables_row_for_the_pick_is_the_pick():
    """One answer: the default chat scenario's pick rents a whole 2-GPU RTX 3090 node, where TP 1 x 2 replicas and
    TP 2 cost the same $240.90 a month. The Cost table's row for that offer is the plan's pick (the faster, TP 2),
    with the pick's layout and $ per 1M output tokens, not the other layout at the same price."""
    from gpuplan_core import api
    from gpuplan_core.interface.inputs import to_scenario

    sc, _ = to_scenario({"in": 2000, "out": 300})
    pick = api.answer_report(sc).pick
    row = next(r for r in api.cost_report(sc).offers if r.offer_id == pick.offer_id)
    assert (row.layout, row.tp, row.replicas) == (pick.layout, pick.tp, pick.replicas)
    assert row.output_cost_per_million_usd == pick.output_cost_per_million_usd
    assert row.monthly_always_on_usd == pick.monthly_usd


def test_tensorrt_llm_fp8_is_refused_where_the_gpu_has_no_fp8_and_an_unlisted_gpu_is_named():
    from gpuplan_core.hardware.catalog import get_gpu

    offers = list(OFFERS.values())
    plan = recommend(Scenario(preset="Llama-3.1-8B", engine="trtllm", weights_format="fp8"), offers)
    picked = {get_gpu(p.gpu).architecture for p in plan.picks}
    assert picked and picked <= {"Ada", "Hopper", "Blackwell"}  # no Ampere or older
    refused = {r["gpu"]: r["reason"] for r in plan.rejected if r["reason"].startswith("TensorRT-LLM")}
    assert refused["A100-80GB-SXM"].startswith("TensorRT-LLM has no FP8 on Ampere")
    assert refused["RTX-3090"] == refused["A100-80GB-SXM"]
    assert refused["T4"].startswith("TensorRT-LLM has no FP8 on Turing")
    # the same question on vLLM keeps Ampere's weight-only FP8 and says nothing of support
    vllm = recommend(Scenario(preset="Llama-3.1-8B", weights_format="fp8"), offers)
    assert not [r for r in vllm.rejected if r["reason"].startswith("TensorRT-LLM")]
    assert not [w for p in vllm.picks for w in p.why if "does not list" in w]
    # BF16 on TensorRT-LLM: every pick on a GPU its 1.x page does not list says so, and only those
    bf16 = recommend(Scenario(preset="Llama-3.1-8B", engine="trtllm"), offers)
    for p in bf16.picks:
        noted = [w for w in p.why if "does not list" in w]
        assert bool(noted) == (p.gpu not in {"B200", "H100-SXM", "H100-PCIe", "H200", "L40", "L40S"} | A100S), p.gpu


A100S = {"A100-80GB-SXM", "A100-80GB-PCIe", "A100-40GB"}


def test_a_gpu_the_engine_cannot_serve_the_format_on_says_why_and_what_does():
    plan = recommend(
        Scenario(preset="Llama-3.1-8B", engine="trtllm", weights_format="fp8", gpu="A100-80GB-SXM"),
        list(OFFERS.values()),
    )
    assert not plan.picks
    assert plan.message == (
        "TensorRT-LLM has no FP8 on Ampere (FP8 from Ada, SM 89, on; its support matrix lists FP16, BF16, INT8 and "
        "INT4 there): BF16 or integer weights, or vLLM or SGLang, serve FP8 on it."
    )
