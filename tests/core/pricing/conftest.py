"""Shared by the pricing tests: the corpus of broken files and the bundled pricing file, loaded once."""

from pathlib import Path

import pytest

from gpuplan_core.pricing.csv_file import PricingReport, load_pricing


@pytest.fixture(scope="session")
def corpus() -> Path:
    return Path(__file__).parent / "corpus"


@pytest.fixture(scope="session")
def seed() -> PricingReport:
    return load_pricing()


@pytest.fixture(scope="session")
def seed_row(corpus) -> tuple[str, str]:
    """(header, one good row): the AWS p6-b200 offer at 113.9328 $/node-hour, 14.2416 $/GPU-hour, 8 GPUs."""
    header, row = (corpus / "negative_price.csv").read_text().splitlines()[:2]
    return header, row
