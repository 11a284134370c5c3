"""common/units.py: GB is decimal (10^9 bytes), GiB binary (2^30 bytes); a month is 8,760 h / 12."""

from gpuplan_core.common.units import GB, HOURS_PER_MONTH, MB, SECONDS_PER_DAY, SECONDS_PER_HOUR, TB, TFLOP, GiB


def test_decimal_and_binary_sizes():
    assert (MB, GB, TB, TFLOP) == (1_000_000, 1_000_000_000, 1_000_000_000_000, 1_000_000_000_000)
    assert GiB == 1024 * 1024 * 1024 == 1_073_741_824
    # an "80 GB" H100 holds 80 GiB of HBM: 85.9 decimal GB (80 x 2^30 / 10^9 = 85.899345920)
    assert 80 * GiB / GB == 85.89934592


def test_time_constants():
    assert HOURS_PER_MONTH == 8760 / 12 == 730.0  # 365 days x 24 h / 12 months
    assert SECONDS_PER_HOUR == 60 * 60 == 3600.0
    assert SECONDS_PER_DAY == 24 * 3600 == 86_400
