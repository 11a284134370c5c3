"""perf/clients.py: the load a simulated replica serves: how many requests a run sends, their lengths, and who
sends what when (arrivals in order; a closed-loop client sends its next request when its last one ends)."""

from __future__ import annotations

import random

import pytest

from gpuplan_core.perf.clients import Clients, Load, Shape, lengths
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


def test_open_loop_arrivals_come_in_send_order_after_the_engines_intake():
    loop = engine_loop("vllm")
    c = Clients(Load(request_rate=5.0), 50, loop, random.Random(1))
    assert c.sent == sorted(c.sent) and c.sent[0] > 0
    assert c.arrive == [t + loop.request_in_s for t in c.sent]  # 50.8 ms of API server and tokenizer
    first = c.next_arrival()
    assert first == c.arrive[0] and c.arrived(first - 1e-9) == [] and c.arrived(first) == [0]
    assert c.arrived(float("inf")) == list(range(1, 50))


def test_a_closed_loop_client_sends_its_next_request_when_the_last_ends():
    """Two clients, five requests: two start at once; when request 0 ends at 1.0 s, request 2 is sent 2 ms later
    (the response's way back) and reaches the engine after its intake."""
    loop = engine_loop("vllm")
    c = Clients(Load(concurrency=2, shape=Shape(requests=5)), 5, loop, random.Random(0))
    assert c.sent[:2] == [0.0, 0.0] and c.arrived(1.0) == [0, 1]
    assert c.finish(0, 1.0) == 1
    assert c.sent[2] == pytest.approx(1.0 + 0.002)
    assert c.next_arrival() == pytest.approx(1.002 + loop.request_in_s)
