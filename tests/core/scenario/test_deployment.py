"""scenario/deployment.py: the traffic and its targets, the pricing, and the engine's runtime: defaults, derived
rates by hand, and the errors that name a field and what it allows."""

import pytest

from gpuplan_core.scenario.deployment import Pricing, RuntimeAssumptions, Traffic


def test_traffic_defaults():
    t = Traffic()
    assert (t.requests_per_day, t.peak_to_average, t.ttft_target_s, t.tpot_target_s) == (10_000, 3.0, 2.0, 0.1)
    assert (t.arrival, t.lengths, t.length_spread) == ("poisson", "fixed", 0.2)
    assert (t.monthly_growth, t.spike_month, t.spike_factor, t.grows) == (0.0, None, 3.0, False)


def test_the_peak_rate_by_hand():
    # 50,000 requests a day / 86,400 s = 0.5787 req/s on average; x 3 at the busiest hour = 1.7361 req/s
    assert Traffic(requests_per_day=50_000).peak_requests_per_s == pytest.approx(50_000 / 86_400 * 3)
    assert Traffic(requests_per_day=86_400, peak_to_average=1).peak_requests_per_s == 1.0


def test_requests_per_day_compound_and_spike_in_their_month():
    t = Traffic(requests_per_day=10_000, monthly_growth=0.1, spike_month=3, spike_factor=3)
    # month m: 10,000 x 1.1^m, x 3 in month 3 only
    assert [t.requests_per_day_in(m) for m in range(5)] == pytest.approx([10_000, 11_000, 12_100, 39_930, 14_641])
    assert t.grows and Traffic(spike_month=1).grows and not Traffic(monthly_growth=0).grows
    assert Traffic(requests_per_day=None).requests_per_day_in(2) is None
    assert Traffic(requests_per_day=0).requests_per_day_in(0) is None  # 0: one replica, no traffic estimate


@pytest.mark.parametrize(
    "fields, sentence",
    [
        ({"requests_per_day": -1}, "requests_per_day: Input should be greater than or equal to 0"),
        ({"peak_to_average": 0.5}, "peak_to_average: Input should be greater than or equal to 1"),
        ({"ttft_target_s": 0}, "ttft_target_s: Input should be greater than 0 (allowed: > 0.0)"),
        ({"tpot_target_s": 61}, "tpot_target_s: Input should be less than or equal to 60"),
        ({"length_spread": 0.95}, "length_spread: Input should be less than or equal to 0.9"),
        ({"spike_month": 0}, "spike_month: Input should be greater than or equal to 1"),
        ({"arrival": "uniform"}, "arrival: Input should be 'poisson' or 'bursty'"),
    ],
)
def test_traffic_errors_name_the_field(refused, fields, sentence):
    assert refused(Traffic, **fields).startswith(sentence)


def test_pricing_defaults():
    p = Pricing()
    assert (p.billing, p.provider, p.hours_per_month, p.utilization) == (None, None, 730.0, 0.5)  # 8,760 h / 12
    assert (p.spot_restart_overhead, p.your_prices, p.allow_accelerators, p.price_source) == (0.1, {}, False, "add")


def test_your_prices_from_text_or_a_mapping():
    assert Pricing(your_prices="a-od=2.10, b-od=0.85").your_prices == {"a-od": 2.10, "b-od": 0.85}
    assert Pricing(your_prices="a-od=1; b-od=2.5").your_prices == {"a-od": 1.0, "b-od": 2.5}  # ';' separates too
    assert Pricing(your_prices={"a-od": 100_000}).your_prices == {"a-od": 100_000}  # the cap itself is allowed
    assert Pricing(your_prices=" , ").your_prices == {}


@pytest.mark.parametrize(
    "raw, sentence",
    [
        ("a=1,b=0", "your_prices: b at 0 USD per GPU-hour; a price must be above 0 and at most 100,000"),
        ({"a": -2.5}, "your_prices: a at -2.5 USD per GPU-hour; a price must be above 0 and at most 100,000"),
        ({"a": 100_001}, "your_prices: a at 100001 USD per GPU-hour"),
        ({" ": 1.0}, "your_prices: an offer id is empty"),
        ("=3", "your_prices: '=3' is not 'offer-id=USD per GPU-hour'"),
        ("a=200000", "your_prices: 'a=200000' is not 'offer-id=USD per GPU-hour'"),  # above the cap
        ("a=inf", "your_prices: 'a=inf' is not 'offer-id=USD per GPU-hour'"),
        ("a=nan", "your_prices: 'a=nan' is not 'offer-id=USD per GPU-hour'"),
        ("a=cheap", "your_prices: 'a=cheap' is not 'offer-id=USD per GPU-hour'"),
        (",".join(f"o{i}=1" for i in range(51)), "your_prices: at most 50 offers"),
    ],
)
def test_a_bad_price_is_refused_by_name(refused, raw, sentence):
    assert refused(Pricing, your_prices=raw).startswith(sentence)


def test_pricing_bounds(refused):
    assert refused(Pricing, hours_per_month=745).startswith(
        "hours_per_month: Input should be less than or equal to 744"
    )
    assert refused(Pricing, utilization=0).startswith("utilization: Input should be greater than or equal to 0.05")
    assert refused(Pricing, billing="monthly").startswith("billing: Input should be 'on_demand', 'spot', ")


def test_runtime_defaults_and_the_limits_the_user_set():
    a = RuntimeAssumptions()
    assert (a.memory_utilization, a.engine, a.prefix_cache_fraction) == (0.90, "vllm", 0.0)  # vLLM's 0.9
    assert (a.spec_draft_params, a.spec_tokens, a.spec_acceptance) == (None, 4, 0.7)
    assert a.engine_limit_overrides() == {}
    assert RuntimeAssumptions(max_num_seqs=64).engine_limit_overrides() == {"max_num_seqs": 64}
    both = RuntimeAssumptions(max_num_seqs=256, max_num_batched_tokens=2048)
    assert both.engine_limit_overrides() == {"max_num_seqs": 256, "max_num_batched_tokens": 2048}


@pytest.mark.parametrize(
    "fields, sentence",
    [
        ({"engine": "ollama"}, "engine: Input should be 'vllm', 'sglang', 'trtllm' or 'transformers'"),
        ({"memory_utilization": 0.4}, "memory_utilization: Input should be greater than or equal to 0.5"),
        ({"max_num_batched_tokens": 8}, "max_num_batched_tokens: Input should be greater than or equal to 16"),
        ({"prefix_cache_fraction": 0.96}, "prefix_cache_fraction: Input should be less than or equal to 0.95"),
        ({"spec_draft_params": 10}, "spec_draft_params: Input should be greater than or equal to 1000000"),
        ({"spec_tokens": 17}, "spec_tokens: Input should be less than or equal to 16"),
    ],
)
def test_runtime_errors_name_the_field(refused, fields, sentence):
    assert refused(RuntimeAssumptions, **fields).startswith(sentence)
