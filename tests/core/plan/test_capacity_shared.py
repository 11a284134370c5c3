"""Runs and step times shared between replica questions (plan/capacity.py): a question that differs in its targets
alone reuses the runs of another, one of another request length reuses the step model's step times, and each is
judged exactly as it would be from nothing (same capacity, same load points, same latencies)."""

from __future__ import annotations

import random

import pytest

from gpuplan_core.plan.answer import answer
from gpuplan_core.plan.capacity import simulations_run
from gpuplan_core.plan.search import forget
from gpuplan_core.pricing.csv_file import load_pricing
from gpuplan_core.scenario.scenario import Scenario

OFFERS = load_pricing().offers


def _fresh(sc: Scenario):
    forget()
    return answer(sc, OFFERS).to_json()


def _questions(seed: int) -> list[tuple[Scenario, Scenario]]:
    rng = random.Random(seed)
    out = []
    for _ in range(3):
        base = Scenario(
            preset=rng.choice(["Llama-3.1-8B", "Qwen2.5-7B"]),
            gpu=rng.choice(["L40S", "H100-SXM"]),
            input_tokens=rng.choice([500, 2000]),
            requests_per_day=rng.choice([5_000, 50_000]),
            engine=rng.choice(["vllm", "sglang", "trtllm"]),
        )
        change = rng.choice(
            [{"ttft_target_s": 0.6}, {"tpot_target_s": 0.03}, {"input_tokens": base.request.input_tokens + 300}]
        )
        out.append((base, base.with_(**change)))
    return out


@pytest.mark.parametrize("base, changed", _questions(seed=5))
def test_a_question_after_another_is_answered_as_from_nothing(base, changed):
    alone = _fresh(changed)
    forget()
    answer(base, OFFERS)  # its runs and step times are remembered
    assert answer(changed, OFFERS).to_json() == alone


def test_new_targets_reuse_the_runs_the_old_ones_made():
    sc = Scenario(preset="Llama-3.1-8B", gpu="H100-SXM", input_tokens=1000, requests_per_day=20_000)
    forget()
    runs = simulations_run()
    answer(sc, OFFERS)
    first = simulations_run() - runs
    forget()
    answer(sc.with_(ttft_target_s=1.0), OFFERS)
    runs = simulations_run()
    answer(sc, OFFERS)
    again = simulations_run() - runs
    # the saturation run (closed loop), 98% and 5% of it were run for the other targets: at least those not again
    assert again <= first - 3


def _question(targets, input_tokens=1500):
    from dataclasses import replace

    from gpuplan_core.hardware.catalog import get_gpu
    from gpuplan_core.memory.request import memory_request
    from gpuplan_core.plan.fitting import kv_sequences
    from gpuplan_core.plan.search import ServingAsk, replica_question

    sc = Scenario(preset="Llama-3.1-8B", input_tokens=input_tokens, requests_per_day=20_000)
    m, gpu = sc.model(), get_gpu("L40S")
    kv = kv_sequences(m, memory_request(sc, weights_format="bf16"), gpu)
    return replace(replica_question(m, ServingAsk.of(sc), gpu, "bf16", 1, 1, kv), targets=targets)


@pytest.mark.parametrize(
    "first, then", [((2.0, 0.1), (0.4, 0.1)), ((0.4, 0.1), (2.0, 0.1)), ((1.0, 0.05), (0.3, 0.02))]
)
def test_a_replica_after_other_targets_has_the_same_capacity_points_and_latencies(first, then):
    from gpuplan_core.plan.capacity import evaluate_replica

    forget()
    runs = simulations_run()
    alone = evaluate_replica(_question(then))
    fresh_runs = simulations_run() - runs
    forget()
    evaluate_replica(_question(first))
    runs = simulations_run()
    shared = evaluate_replica(_question(then))
    assert shared == alone  # capacity, every load point, the light load's latencies
    assert simulations_run() - runs < fresh_runs  # at least the saturation run is not made again


def test_the_performance_curve_after_the_answer_is_the_curve_alone_without_the_answers_runs_again():
    from gpuplan_core.api.perf import serving_curve_report
    from gpuplan_core.perf import serving

    sc = Scenario(preset="Llama-3.1-8B", gpu="H100-SXM", input_tokens=1000, requests_per_day=20_000)
    forget()
    ans = answer(sc, OFFERS)
    detail = ans.detail_scenario(sc)
    forget()
    made = []
    real = serving.simulate
    serving.simulate = lambda *a, **k: made.append(1) or real(*a, **k)
    try:
        alone = serving_curve_report(detail)
        runs_alone = len(made)
        forget()
        answer(sc, OFFERS)
        del made[:]
        shared = serving_curve_report(detail)
    finally:
        serving.simulate = real
    assert shared == alone  # the same points: the curve sees only the runs it asked for
    assert shared.capacity_requests_per_s == ans.pick.requests_per_s_per_replica
    assert len(made) < runs_alone  # the saturation run and the capacity search's completed runs are not made again


def test_step_times_are_not_shared_across_engines():
    """The step model times a covered replica from its engine's measured kernels (perf/kernel_steps.py): an answer
    for SGLang after one for vLLM on the same H100 replica equals the SGLang answer from nothing."""
    vllm = Scenario(preset="Llama-3.1-8B", gpu="H100-SXM", input_tokens=2000, requests_per_day=50_000, engine="vllm")
    sglang = vllm.with_(engine="sglang")
    alone = _fresh(sglang)
    forget()
    answer(vllm, OFFERS)
    assert answer(sglang, OFFERS).to_json() == alone
