"""interface/records_traffic.py: traffic, latency targets and pricing inputs. Targets in milliseconds reach the
Scenario in seconds, growth in % as a fraction, 0 or "Any" as none; the targets apply to interactive serving only;
your prices are refused price by price, by name."""

import pytest

from gpuplan_core.interface.records_traffic import TRAFFIC_RECORDS
from gpuplan_core.scenario.scenario import FIELDS

KEYS = "rpd peak ttft_ms tpot_ms arrival lengths spread growth spike_m spike_x billing provider accel prices myprice "
KEYS += "hours busy spot_restart"
RECORDS = {r.key: r for r in TRAFFIC_RECORDS}
OFFER = "aws-p6-b200-48xl-use1-od"  # an offer of the bundled pricing file


def test_every_link_key_is_still_there_in_order_and_each_sets_one_field():
    assert [k for k in RECORDS if k in KEYS.split(" ")] == KEYS.split(" ")
    for r in TRAFFIC_RECORDS:
        assert r.field in FIELDS and r.field_names() == (r.field,), r.key


@pytest.mark.parametrize(
    "link,field,value",
    [
        ({"ttft_ms": "1500"}, "ttft_target_s", 1.5),
        ({"tpot_ms": "50"}, "tpot_target_s", 0.05),
        ({"ttft_ms": "0"}, "ttft_target_s", None),
        ({"rpd": "50000"}, "requests_per_day", 50_000),
        ({"rpd": "0"}, "requests_per_day", None),
        ({"growth": "10"}, "monthly_growth", 0.1),
        ({"spike_m": "6", "spike_x": "4"}, "spike_month", 6),
        ({"spike_m": "0"}, "spike_month", None),
        ({"peak": "2.5"}, "peak_to_average", 2.5),
        ({"arrival": "In bursts (twice as uneven)"}, "arrival", "bursty"),
        ({"lengths": "Long-tailed, like chat traffic"}, "lengths", "chat"),
        ({"billing": "Any billing"}, "billing", None),
        ({"billing": "Spot / interruptible"}, "billing", "spot"),
        ({"provider": "any"}, "provider", None),
        ({"provider": "lambda"}, "provider", "lambda"),
        ({"accel": "true"}, "allow_accelerators", True),
        ({"hours": "720"}, "hours_per_month", 720),
        ({"busy": "0.25"}, "utilization", 0.25),
        ({"myprice": f"{OFFER}=2.5"}, "your_prices", {OFFER: 2.5}),
    ],
)
def test_a_link_value_reaches_its_field_in_the_field_s_unit(from_link, link, field, value):
    _, flat, notes = from_link(link)
    assert flat[field] == value and notes == []


def test_the_defaults_are_the_scenario_s_in_the_widget_s_unit():
    """The Scenario's 2 s and 100 ms targets, 10,000 requests a day, 730 hours a month (DOMAIN.md's convention)."""
    got = {k: RECORDS[k].default for k in ("ttft_ms", "tpot_ms", "rpd", "hours", "growth", "billing")}
    assert got == {
        "ttft_ms": 2000.0,
        "tpot_ms": 100.0,
        "rpd": 10_000.0,
        "hours": 730.0,
        "growth": 0.0,
        "billing": "any",
    }
    assert (RECORDS["hours"].least, RECORDS["hours"].hi) == (1, 744)  # 31 days x 24 hours


def test_latency_targets_are_for_interactive_serving_only(from_link):
    _, flat, _ = from_link({"ttft_ms": "1500", "tpot_ms": "50", "workload": "Batch inference (offline jobs)"})
    assert (flat["ttft_target_s"], flat["tpot_target_s"]) == (None, None)
    assert RECORDS["ttft_ms"].jobs == {"interactive"} and RECORDS["rpd"].jobs == {"interactive", "batch"}
    _, flat, _ = from_link({"rpd": "50000", "workload": "Pre-training"})
    _, plain, _ = from_link({"workload": "Pre-training"})
    assert flat["requests_per_day"] == plain["requests_per_day"] != 50_000  # training: traffic does not apply


@pytest.mark.parametrize(
    "link,note",
    [
        ({"hours": "0"}, "Link value hours='0' is outside 1 to 744; the default is used."),
        ({"peak": "0.5"}, "Link value peak='0.5' is outside 1 to 100; the default is used."),
        ({"busy": "0.01"}, "Link value busy='0.01' is outside 0.05 to 1; the default is used."),
        ({"ttft_ms": "-5"}, "Link value ttft_ms='-5' is outside 0 to 3600000 (0 = none); the default is used."),
        (
            {"myprice": f"{OFFER}=0"},
            f"Your prices: {OFFER}=0 is refused (allowed: above 0 USD per GPU-hour, at most 100,000); the catalog price "
            f"of {OFFER} stands.",
        ),
        ({"myprice": "garbage"}, "your prices: 'garbage' is not 'offer-id=USD per GPU-hour' with a price above 0"),
    ],
)
def test_a_bad_value_is_named(from_link, link, note):
    values, flat, notes = from_link(link)
    assert len(notes) == 1 and notes[0].startswith(note)
    assert flat["hours_per_month"] == 730 and flat["your_prices"] == {}


def test_one_refused_price_leaves_the_others(from_link):
    _, flat, notes = from_link({"myprice": f"{OFFER}=3, lambda-h100-1-od=-1"})
    assert flat["your_prices"] == {OFFER: 3.0} and notes[0].startswith("Your prices: lambda-h100-1-od=-1 is refused")


def test_a_serving_link_reads_back_as_itself(round_trip):
    values = {
        "rpd": 50_000.0,
        "peak": 2.0,
        "ttft_ms": 800.0,
        "tpot_ms": 40.0,
        "arrival": "bursty",
        "lengths": "uniform",
        "spread": 0.3,
        "growth": 12.5,
        "spike_m": 3.0,
        "spike_x": 5.0,
        "billing": "reserved",
        "provider": "aws",
        "accel": True,
        "hours": 720.0,
        "busy": 0.7,
        "spot_restart": 0.2,
    }
    assert round_trip(values) == (values, [])
