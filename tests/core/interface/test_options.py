"""The sliders' natural steps and their labels (options.py), and the stops a record's slider offers (record.py)."""

from gpuplan_core import INPUTS
from gpuplan_core.interface.options import BATCH_STEPS, INPUT_TOKEN_STEPS, SIZES_B, round_steps, short_number
from gpuplan_core.model.formats import FORMATS


def test_round_steps_are_one_to_eight_times_each_power_of_ten():
    assert round_steps(100, 1000) == (100, 150, 200, 300, 400, 500, 600, 800, 1000)
    assert round_steps(10, 20) == (10, 15, 20)
    assert len(INPUT_TOKEN_STEPS) == 4 * 8 + 1  # 100 ... 1,000,000: four decades of eight, and 1M


def test_the_use_cases_lengths_are_stops_of_the_sliders():
    from gpuplan_core import USE_CASES

    for case in USE_CASES.values():
        for k in ("in", "out"):
            if k in case:
                assert case[k] in INPUTS[k].slider_stops(None), (k, case[k])


def test_a_value_between_stops_is_a_stop_of_its_own():
    """A link's in=3333 (or a typed number) is on the slider, between 3,000 and 4,000; every other stop stays."""
    stops = INPUTS["in"].slider_stops(3333.0)
    assert stops[stops.index(3000.0) + 1 :][:2] == [3333.0, 4000.0]
    assert len(stops) == len(INPUT_TOKEN_STEPS) + 1
    assert INPUTS["in"].slider_stops(3000.0) == [float(v) for v in INPUT_TOKEN_STEPS]  # already a stop


def test_a_value_past_the_last_stop_is_the_slider_s_end():
    assert INPUTS["in"].slider_stops(3_000_000.0)[-2:] == [1_000_000.0, 3_000_000.0]
    assert INPUTS["batch"].slider_stops(10_000.0)[-2:] == [4096.0, 10_000.0]


def test_batch_moves_in_powers_of_two_and_size_on_published_sizes():
    assert BATCH_STEPS == (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096)
    assert INPUTS["size_b"].slider_stops(7.0) == [float(v) for v in SIZES_B]  # 0.5B ... 2000B, all in range
    assert INPUTS["size_b"].label_of(1.5) == "1.5B"


def test_the_weights_slider_runs_through_the_formats_in_order():
    w = INPUTS["weights"]
    assert w.widget == "select_slider" and w.option_list() == list(FORMATS)
    bits = [FORMATS[f].bits_per_value for f in w.option_list()]
    assert bits[0] == 32 and bits[-1] == 4 and all(b <= 16 for b in bits[1:])


def test_short_numbers_read_as_a_person_says_them():
    assert [short_number(v) for v in (300, 1500, 2000, 128_000, 1_000_000, 1_500_000)] == [
        "300",
        "1.5k",
        "2k",
        "128k",
        "1M",
        "1.5M",
    ]
    assert short_number(7936) == "7,936"  # not a round number: in full, not "7.9k"
    assert short_number(1234) == "1,234"
