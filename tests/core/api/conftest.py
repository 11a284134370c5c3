"""Shared by the API tests: the bundled offers, loaded once, and the offer a hand-made pick rents."""

import pytest

from gpuplan_core.pricing.csv_file import load_pricing


@pytest.fixture(scope="session")
def offers():
    return load_pricing().offers


@pytest.fixture(scope="session")
def h100_offer(offers):
    """The cheapest on-demand H100 SXM offer of the bundled file (per GPU-hour)."""
    rows = [o for o in offers if o.gpu == "H100-SXM" and o.billing_model == "on_demand"]
    return min(rows, key=lambda o: o.price_per_gpu_hour_usd)
