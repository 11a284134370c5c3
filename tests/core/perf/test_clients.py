"""perf/clients.py: the load a simulated replica serves: how many requests a run sends, their lengths, and who
sends what when (arrivals in order; a closed-loop client sends its next request when its last one ends)."""

from __future__ import annotations

import random

import pytest

from gpuplan_core.perf import clients
from gpuplan_core.perf.clients import (
    BENCH_CLIENTS,
    CHAT_SIGMA,
    SOURCE_CLIENTS,
    Clients,
    Load,
    RunDraws,
    Shape,
    client_cost,
    first_sends,
    lengths,
)
from gpuplan_core.perf.schedulers import engine_loop


def test_a_run_sends_400_arrivals_or_four_requests_per_client_between_200_and_3000():
    assert Load(request_rate=2.0).count() == 400
    assert Load(concurrency=10).count() == 200  # max(200, 4 x 10)
    assert Load(concurrency=100).count() == 400  # 4 x 100
    assert Load(concurrency=5000).count() == 3000  # capped
    assert Load(concurrency=10, shape=Shape(requests=7)).count() == 7  # the shape's own count wins


@pytest.mark.parametrize("bad", [{}, {"concurrency": 2, "request_rate": 1.0}, {"concurrency": 0}, {"request_rate": 0}])
def test_a_load_is_exactly_one_of_clients_or_a_positive_rate(bad):
    with pytest.raises(ValueError):
        Load(**bad)


def test_a_spread_is_below_one():
    with pytest.raises(ValueError, match="length_spread"):
        Shape(length_spread=1.0)


class _R:
    """The three fields ``lengths`` reads of a replica."""

    def __init__(self, i: int, o: int, kv: int):
        self.input_tokens, self.output_tokens, self.kv_tokens = i, o, kv


def test_fixed_lengths_are_the_set_ones_and_uniform_ones_lie_in_the_spread():
    rng = random.Random(0)
    assert lengths(_R(2000, 300, 10**6), Shape(), 3, rng) == ([2000] * 3, [300] * 3)
    ins, outs = lengths(_R(2000, 300, 10**6), Shape(lengths="uniform", length_spread=0.5), 500, rng)
    assert min(ins) >= 1000 and max(ins) <= 2000 and min(outs) >= 150 and max(outs) <= 300
    assert len(set(ins)) > 100  # they do spread


def test_a_request_longer_than_the_whole_cache_is_cut_to_fit():
    """A ~900 + ~300 token request (spread 1%) in a 1,000-token cache: the output to at most a quarter of the room
    (250), the prompt to the rest (750). Fixed lengths are the scenario's own (the replica was sized for them)."""
    ins, outs = lengths(_R(900, 300, 1000), Shape(lengths="uniform", length_spread=0.01), 1, random.Random(0))
    assert (ins, outs) == ([750], [250])


def _drawn_in_place(shape: Shape, rate: float, n: int) -> tuple[tuple[list[int], list[int]], list[float], tuple]:
    """What a run drew before the draws were remembered: the lengths and the rate inside each draw."""
    ref = random.Random(shape.seed)
    if shape.lengths == "uniform":
        lo = 1 - shape.length_spread
        one = lambda x: [max(1, round(x * ref.uniform(lo, 1))) for _ in range(n)]  # noqa: E731
    elif shape.lengths == "lognormal":
        mu = -(CHAT_SIGMA**2) / 2
        one = lambda x: [max(1, round(x * ref.lognormvariate(mu, CHAT_SIGMA))) for _ in range(n)]  # noqa: E731
    else:
        one = lambda x: [x] * n  # noqa: E731
    ins, outs = one(2000), one(300)
    t, sent = 0.0, []
    for _ in range(n):
        t += ref.gammavariate(0.25, 1 / (rate * 0.25)) if shape.arrival == "bursty" else ref.expovariate(rate)
        sent.append(t)
    return (ins, outs), sent, ref.getstate()


@pytest.mark.parametrize("arrival", ["poisson", "bursty"])
@pytest.mark.parametrize("kind,spread", [("fixed", 0.0), ("uniform", 0.3), ("lognormal", 0.0)])
def test_remembered_draws_are_random_randoms_own_float_for_float(arrival, kind, spread):
    """A run's lengths and send times, their unit draws remembered across runs (clients._DRAWS) and scaled by the
    lengths and the rate: equal to drawing them with the length and the rate inside (uniform's lo + (1 - lo) u,
    lognormal times the length, expovariate(rate), gammavariate(0.25, 1 / (0.25 rate)), summed in order), at any
    rate, on the first run and a remembered one, with the generator left where it would be."""
    shape = Shape(lengths=kind, length_spread=spread, arrival=arrival)
    for rate in (3.0, 0.7, 3.0):
        rng = random.Random(shape.seed)
        drawn = lengths(_R(2000, 300, 10**6), shape, 64, rng)
        sent = Clients(Load(request_rate=rate, shape=shape), 64, engine_loop("vllm"), rng).sent
        assert (drawn, sent, rng.getstate()) == _drawn_in_place(shape, rate, 64)


def test_open_loop_arrivals_come_in_send_order_after_the_engines_intake():
    loop = engine_loop("vllm", request_in_s=0.0486)
    c = Clients(Load(request_rate=5.0), 50, loop, random.Random(1))
    assert c.sent == sorted(c.sent) and c.sent[0] > 0
    assert c.arrive == [t + loop.request_in_s for t in c.sent]  # 48.6 ms between the send and the engine
    first = c.next_arrival()
    assert first == c.arrive[0] and c.arrived(first - 1e-9) == [] and c.arrived(first) == [0]
    assert c.arrived(float("inf")) == list(range(1, 50))


def test_a_closed_loop_client_sends_its_next_request_when_the_last_ends():
    """Two clients, five requests: two start at once; when request 0 ends at 1.0 s, request 2 is sent 2 ms later
    (the response's way back) and reaches the engine after its intake."""
    loop = engine_loop("vllm", request_in_s=0.0486)
    c = Clients(Load(concurrency=2, shape=Shape(requests=5)), 5, loop, random.Random(0))
    assert c.sent[:2] == [0.0, 0.0] and c.arrived(1.0) == [0, 1]
    assert c.finish(0, 1.0) == 1
    assert c.sent[2] == pytest.approx(1.0 + 0.002)
    assert c.next_arrival() == pytest.approx(1.002 + loop.request_in_s)


def test_each_published_source_names_its_benchmark_client_and_a_client_cost_is_that_clients_only():
    """GPUStack's runs were sent by `vllm bench serve --backend openai-chat`: 40.1 ms before vLLM's first token
    (fitted on its training rows, Qwen3-8B's and DeepSeek-R1's); SGLang's bench_serving 84.3 ms (the cookbook's
    Llama-3.1-70B and DeepSeek-R1 runs); NIM's AIPerf has no light-load training row (0); a source the table does not know
    (your own runs, the app's answer) gets none; a left-out-source fit's costs replace the fitted ones."""
    from gpuplan_core.perf.serving_calibration import load_serving_measurements, source_of

    assert {source_of(i) for i in load_serving_measurements()["id"]} == set(SOURCE_CLIENTS)
    assert set(SOURCE_CLIENTS.values()) <= set(BENCH_CLIENTS)
    assert client_cost("gpustack-q3-8b-h100", "vllm") == 0.0401
    assert client_cost("gpustack-q3-14b-a100", "sglang") == 0.0268  # the same client, another GPUStack source
    assert client_cost("dstack-dsr1", "vllm") == client_cost("sglcb-l70b-a100", "sglang") == 0.0843
    assert (
        client_cost("trt014on", "trtllm") == 0.0024
    )  # Triton's client (11.0 ms before TensorRT-LLM 0.14's step factor)
    assert client_cost("nim", "trtllm") == 0.0 and client_cost("deployment", "vllm") == 0.0
    assert client_cost("gpustack-q3-8b-h100", "vllm", {("vllm-bench-serve-chat", "vllm"): 0.02}) == 0.02
    assert client_cost("gpustack-q3-8b-h100", "vllm", {}) == 0.0


def test_a_client_cost_shifts_its_own_runs_first_token_and_no_other_run():
    """One client alone (closed loop of 1, GPUStack's Qwen3-8B on vLLM): the first-token time with the client's
    40.1 ms is the one without it plus exactly 40.1 ms (each request reaches the engine that much later and nothing
    queues; its front end left out: ``ingests={}``); NIM's run (AIPerf, no fitted cost) and a run of an unknown source
    are predicted as with no client (no cost, no front end)."""
    from gpuplan_core.perf.serving_calibration import load_serving_measurements, predict_row

    rows = load_serving_measurements().set_index("id")
    ttft = rows[(rows["metric"] == "ttft") & (rows["load"] == 1) & (rows["load_kind"] == "concurrency")]
    gs = ttft[ttft.index.str.startswith("gpustack-q3-8b-h100") & ttft["engine"].str.startswith("vLLM")]
    gs = gs[gs["statistic"] == "mean"]
    row = gs.iloc[0].to_dict() | {"id": gs.index[0]}
    with_client, without = predict_row(row, ingests={})["predicted"], predict_row(row, client_costs={}, ingests={})
    without = without["predicted"]
    assert with_client - without == pytest.approx(40.1, abs=1e-3)  # ms, as the row is published
    nim = ttft[ttft.index.str.startswith("nim")].iloc[0]
    nim_row = nim.to_dict() | {"id": nim.name}
    assert predict_row(nim_row)["predicted"] == predict_row(nim_row, client_costs={})["predicted"]
    mine = row | {"id": "deployment-1"}
    assert predict_row(mine)["predicted"] == without


def test_a_front_end_takes_requests_in_send_order_and_hands_over_each_busy_spell_at_its_end():
    """ingest_done by hand, 10 ms a request + 1 ms a prompt token: three sent at once (100, 200, 300 tokens) are
    taken in by 0.11, 0.32 and 0.63 s and all reach the engine at 0.63; one sent at 1.0 s to the idle front end
    reaches it at 1.11; a request not yet sent (NaN) has no time."""
    import numpy as np

    from gpuplan_core.perf.clients import ingest_done

    shape = Shape(ingest_s_per_request=0.01, ingest_s_per_token=0.001)
    done = ingest_done(shape, np.array([0.0, 0.0, 0.0, 1.0, np.nan]), np.array([100, 200, 300, 100, 100]))
    assert done[:4] == pytest.approx([0.63, 0.63, 0.63, 1.11])
    assert np.isnan(done[4])
    with pytest.raises(ValueError, match="ingest"):
        Shape(ingest_s_per_token=-1e-6)


def test_a_burst_behind_a_front_end_is_the_same_run_started_when_the_burst_is_taken_in():
    """200 requests of 500 tokens sent at once behind a front end of 5 ms + 20 us a token take 200 x 15 ms = 3 s to
    take in; the engine then sees them all at once, so every first token is 3 s later than with no front end, and
    the time per token is the same."""
    from gpuplan_core.perf.replica import replica_for
    from gpuplan_core.perf.simulate import simulate
    from gpuplan_core.scenario.scenario import Scenario

    r, _ = replica_for(Scenario(preset="Llama-3.1-8B", input_tokens=500, output_tokens=50), "H100-SXM")
    plain = simulate(r, Load(concurrency=200, shape=Shape(requests=200, lengths="fixed")))
    behind = simulate(
        r,
        Load(
            concurrency=200,
            shape=Shape(requests=200, lengths="fixed", ingest_s_per_request=0.005, ingest_s_per_token=2e-5),
        ),
    )
    assert behind.ttft_s == pytest.approx(plain.ttft_s + 3.0, abs=1e-9)
    assert behind.tpot_s == pytest.approx(plain.tpot_s, abs=1e-12)


def test_only_the_client_that_showed_a_front_end_has_one():
    """The front end is the chat client's (fitted on GPUStack's bursts) and no other client's; a source the table
    does not know gets none, and a left-out-source fit's figures replace the fitted ones."""
    from gpuplan_core.perf.clients import client_ingest

    chat = BENCH_CLIENTS["vllm-bench-serve-chat"]
    assert all(per_request > 0 or per_token > 0 for _, per_request, per_token in chat.ingest)
    assert all(not c.ingest for name, c in BENCH_CLIENTS.items() if name != "vllm-bench-serve-chat")
    assert client_ingest("gpustack-dsr1", "vllm") == chat.ingest_s("vllm")
    assert client_ingest("deployment", "vllm") == (0.0, 0.0) and client_ingest("nim", "trtllm") == (0.0, 0.0)
    assert client_ingest("gpustack-dsr1", "vllm", {("vllm-bench-serve-chat", "vllm"): (0.1, 0.0)}) == (0.1, 0.0)


@pytest.mark.parametrize("arrival", ["poisson", "bursty"])
def test_a_runs_draws_without_a_generator_are_a_fresh_generators_float_for_float(arrival):
    """``RunDraws`` (what simulate draws with): the lengths and send times of a run equal those drawn in place by
    random.Random(seed), on a first run, on a run whose draws are all remembered, and on one whose lengths are
    remembered but whose request count (so its gaps) is new: its generator is then brought to the state after the
    lengths by drawing them again."""
    shape = Shape(lengths="lognormal" if arrival == "poisson" else "uniform", length_spread=0.3, arrival=arrival)
    for rate, n in ((3.0, 64), (0.7, 64), (3.0, 64)):
        draws = RunDraws(shape.seed)
        drawn = lengths(_R(2000, 300, 10**6), shape, n, draws)
        sent = first_sends(Load(request_rate=rate, shape=shape), n, draws)[1]
        ref, ref_sent, _ = _drawn_in_place(shape, rate, n)
        assert (drawn, sent) == (ref, ref_sent)
    clients._DRAWS.clear()
    lengths(_R(2000, 300, 10**6), shape, 64, RunDraws(shape.seed))  # the lengths alone, remembered
    draws = RunDraws(shape.seed)
    lengths(_R(2000, 300, 10**6), shape, 64, draws)
    assert first_sends(Load(request_rate=3.0, shape=shape), 64, draws)[1] == _drawn_in_place(shape, 3.0, 64)[1]
