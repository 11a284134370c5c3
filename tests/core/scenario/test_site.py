"""scenario/site.py: where the machines run and what owning them costs; each default sourced, each bound named."""

import pytest

from gpuplan_core.pricing.energy import region_ids
from gpuplan_core.scenario.site import Site


def test_the_sourced_defaults():
    s = Site()
    assert s.region == "us-virginia" and s.region in region_ids()
    assert (s.pue, s.electricity_usd_per_kwh, s.grid_gco2_per_kwh, s.server_usd_per_gpu) == (None, None, None, None)
    assert s.amortisation_years == 5.0  # Epoch AI: servers bought from 2023
    assert s.hosting_usd_per_kw_month == 184.06  # CBRE North America H2 2024
    assert s.own_utilization == 1.0


def test_every_listed_region_is_accepted():
    assert all(Site(region=r).region == r for r in region_ids())


def test_an_unknown_region_names_the_allowed_ones(refused):
    msg = refused(Site, region="atlantis")
    assert msg.startswith("region: 'atlantis' is not one of ") and all(r in msg for r in region_ids())
    assert refused(Site, region="") == "region: String should have at least 1 character"


@pytest.mark.parametrize(
    "field, value, sentence",
    [
        ("pue", 0.9, "pue: Input should be greater than or equal to 1 (allowed: >= 1.0)"),  # facility >= IT power
        ("pue", 3.5, "pue: Input should be less than or equal to 3 (allowed: <= 3.0)"),
        ("electricity_usd_per_kwh", 0, "electricity_usd_per_kwh: Input should be greater than 0 (allowed: > 0.0)"),
        ("grid_gco2_per_kwh", -1, "grid_gco2_per_kwh: Input should be greater than or equal to 0 (allowed: >= 0.0)"),
        ("amortisation_years", 0.25, "amortisation_years: Input should be greater than or equal to 0.5"),
        ("own_utilization", 0.01, "own_utilization: Input should be greater than or equal to 0.05"),
        ("server_usd_per_gpu", 0, "server_usd_per_gpu: Input should be greater than 0"),
    ],
)
def test_out_of_range_values_name_the_field_and_the_bound(refused, field, value, sentence):
    assert refused(Site, **{field: value}).startswith(sentence)


def test_a_site_is_frozen_and_takes_no_other_field(refused):
    assert refused(Site, country="fr").startswith("country: Extra inputs are not permitted")
    with pytest.raises(ValueError):
        Site().pue = 1.2
