"""common/text.py: numbers as people read them (GB = 10^9 bytes, GiB = 2^30), and numbers in a chain of
arithmetic printed so that each step multiplies out."""

import math

import pytest

from gpuplan_core.common.text import E_NOTATION_FROM, count, counted, exact, figure, gb, gib, ms, pct, rate, usd

LLAMA_8B_BF16_WEIGHTS_BYTES = 2 * 8_030_261_248  # 2 bytes per BF16 parameter = 16,060,522,496 bytes


def test_gb_and_gib_divide_by_their_own_unit():
    assert gb(LLAMA_8B_BF16_WEIGHTS_BYTES, 2) == "16.06 GB"  # 16,060,522,496 / 10^9
    assert gib(LLAMA_8B_BF16_WEIGHTS_BYTES, 2) == "14.96 GiB"  # 16,060,522,496 / 2^30 = 14.957
    assert gb(80 * 2**30) == "85.9 GB" and gib(80 * 2**30) == "80.0 GiB"  # an "80 GB" H100
    assert gb(1.5e12, 0) == "1,500 GB"
    assert gb(None) == gib(None) == "-"


@pytest.mark.parametrize(
    "seconds, text",
    [
        (2.0, "2,000 ms"),  # >= 100 ms: whole milliseconds
        (0.5, "500 ms"),
        (0.0999, "99.9 ms"),  # 10 to 100 ms: one decimal
        (0.0123, "12.3 ms"),
        (0.00512, "5.12 ms"),  # below 10 ms: two decimals
        (None, "-"),
    ],
)
def test_ms(seconds, text):
    assert ms(seconds) == text


def test_usd_shows_cents_below_100_dollars():
    assert usd(7139.4) == "$7,139"
    assert usd(100) == "$100"
    assert usd(99.994) == "$99.99"
    assert usd(0.0456) == "$0.05"
    assert usd(None) == "-"


def test_pct_and_rate():
    assert pct(0.123) == "12%" and pct(0.1234, 1) == "12.3%" and pct(None) == "-"
    assert [rate(x) for x in (0.8412, 12.34, 148.4, 1186.2)] == [
        "0.84 tokens/s",
        "12.3 tokens/s",
        "148 tokens/s",
        "1,186 tokens/s",
    ]
    assert rate(2.29, "req/s") == "2.29 req/s" and rate(None) == "-"


def test_count_in_thousands_of_millions():
    assert count(8_030_261_248) == "8.03B"  # Llama-3.1-8B's parameters
    assert count(405_853_388_800) == "405.85B"
    assert count(1.5e12) == "1.50T"
    assert count(2_500_000) == "2.5M"
    assert count(999_999) == "999,999"
    assert count(None) == "-"


@pytest.mark.parametrize(
    "x, sig, text",
    [
        (0.012345, 3, "0.0123"),
        (0.12345, 3, "0.123"),
        (1.2345, 3, "1.23"),
        (12.345, 3, "12.3"),
        (123.45, 3, "123"),
        (1234.5, 3, "1,234"),  # whole digits are never dropped
        (12.34, 2, "12"),
        (3.43e17, 3, "3.43e+17"),  # from E_NOTATION_FROM up
        (0, 3, "0"),
        (math.inf, 3, "inf"),
    ],
)
def test_figure_keeps_at_least_sig_significant_figures(x, sig, text):
    assert figure(x, sig) == text


def test_figure_rounding_bounds_the_error_of_a_product():
    """Half a unit of the last digit is at most 0.5 / 10^(sig-1) of the number: 5 / 1000 at 3 figures."""
    for x in (0.0104999, 1.00499, 999.5, 123456.7, 7.77e-5):
        assert abs(float(figure(x).replace(",", "")) - x) <= 0.005 * abs(x)


def test_exact_prints_the_number_without_trailing_zeros():
    assert [exact(x) for x in (3.0, 0.4, 17.6289, 2e10, 1234567.5)] == ["3", "0.4", "17.6289", "2e+10", "1,234,567.5"]
    assert exact(E_NOTATION_FROM) == "1e+09"


def test_exact_refuses_what_it_cannot_print_exactly():
    assert exact(1 / 3) is None  # more than 6 decimals: print it with figure
    assert exact(0.1234567) is None and exact(0.1234567, max_decimals=7) == "0.1234567"
    assert exact(math.nan) is None and exact(math.inf) is None


def test_a_count_of_one_is_singular_and_every_other_plural():
    """'1 GPUs on 1 machine(s)' was on the Overview: one word per count, never '(s)'."""
    assert [counted(n, "GPU") for n in (1, 2, 0, 1024)] == ["1 GPU", "2 GPUs", "0 GPUs", "1,024 GPUs"]
    assert counted(1, "machine") == "1 machine" and counted(3, "machine") == "3 machines"
    assert counted(1.0, "replica") == "1 replica" and counted(2.5, "warm worker") == "2.5 warm workers"
    assert counted(2, "query", "queries") == "2 queries"
