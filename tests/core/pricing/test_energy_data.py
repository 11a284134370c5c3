"""The sourced energy, carbon and ownership tables (data/power.csv, data/regions.csv, data/ownership.csv)."""

import pandas as pd
import pytest

from gpuplan_core.common.data import DATA_DIR
from gpuplan_core.hardware.catalog import get_gpu


@pytest.fixture(scope="module")
def power() -> pd.DataFrame:
    return pd.read_csv(DATA_DIR / "power.csv")


@pytest.fixture(scope="module")
def regions() -> pd.DataFrame:
    return pd.read_csv(DATA_DIR / "regions.csv")


@pytest.fixture(scope="module")
def ownership() -> pd.DataFrame:
    return pd.read_csv(DATA_DIR / "ownership.csv")


def test_power_columns_and_ranges(power):
    assert list(power.columns) == [
        "gpu",
        "phase",
        "power_fraction",
        "host_watts_per_gpu",
        "source",
        "basis",
        "as_of",
    ]
    assert set(power["phase"]) <= {"training", "serving"}
    assert ((power["power_fraction"] > 0) & (power["power_fraction"] <= 1)).all()
    assert (power["host_watts_per_gpu"].dropna() > 0).all()
    assert not power.duplicated(["gpu", "phase"]).any()
    # a default for each phase, so every GPU has a figure
    assert {("*", "training"), ("*", "serving")} <= set(zip(power["gpu"], power["phase"], strict=True))


def test_power_rows_never_copy_tdp(power):
    """A fraction of exactly 1 would be the TDP copied as the average, which the brief rules out."""
    assert (power["power_fraction"] < 1).all()


def test_gpus_are_in_the_catalog(power, ownership):
    for gpu in list(power["gpu"]) + list(ownership["gpu"]):
        if gpu != "*":
            assert get_gpu(gpu).gpu == gpu


def test_regions_columns_and_ranges(regions):
    assert list(regions.columns) == [
        "region",
        "label",
        "grid_gco2_per_kwh",
        "electricity_usd_per_kwh",
        "pue",
        "source_grid",
        "source_price",
        "source_pue",
        "as_of",
    ]
    assert 6 <= len(regions) <= 10
    assert regions["region"].is_unique
    assert ((regions["grid_gco2_per_kwh"] > 0) & (regions["grid_gco2_per_kwh"] <= 1500)).all()
    assert ((regions["pue"] >= 1) & (regions["pue"] <= 3)).all()
    prices = regions["electricity_usd_per_kwh"]
    assert (prices.dropna() > 0).all()
    # a price is given only with its source
    assert regions.loc[prices.notna(), "source_price"].notna().all()
    assert "us-average" in set(regions["region"])  # the default named in data/energy_sources.md


def test_ownership_prices_positive(ownership):
    assert list(ownership.columns) == ["gpu", "server_usd_per_gpu", "source", "basis", "as_of"]
    assert (ownership["server_usd_per_gpu"] > 0).all()
    assert ownership["gpu"].is_unique


@pytest.mark.parametrize(
    "name, columns",
    [
        ("power", ["source", "basis", "as_of"]),
        ("regions", ["source_grid", "source_pue", "as_of"]),
        ("ownership", ["source", "basis", "as_of"]),
    ],
)
def test_every_row_has_a_source(name, columns, power, regions, ownership):
    frame = {"power": power, "regions": regions, "ownership": ownership}[name]
    for column in columns:
        assert frame[column].notna().all(), f"{name}.csv: empty {column}"
        assert (frame[column].astype(str).str.strip() != "").all()


def test_h100_training_spot_check(power):
    """Newkirk et al. (arXiv:2506.14551): an 8x H100 HGX node trains at 76% of its 10.2 kW rating.
    Per GPU all-in: 0.76 x 10,200 / 8 = 969 W; the board's share 0.76 x 700 = 532 W; host 969 - 532 = 437 W."""
    row = power[(power["gpu"] == "H100-SXM") & (power["phase"] == "training")].iloc[0]
    assert row["power_fraction"] == pytest.approx(0.76)
    tdp_w = get_gpu("H100-SXM").tdp_w
    assert tdp_w == 700
    all_in_w = 0.76 * 10_200 / 8
    assert row["host_watts_per_gpu"] == pytest.approx(all_in_w - 0.76 * tdp_w, abs=1)


def test_a100_serving_spot_check(power):
    """chuyishang/inference-energy results_paste.md: vLLM on A100-80GB averaged 290.74, 338.60, 362.98 and
    318.71 W over four runs; mean 327.76 W of a 400 W TDP = 0.82."""
    row = power[(power["gpu"] == "A100-80GB-SXM") & (power["phase"] == "serving")].iloc[0]
    tdp_w = get_gpu("A100-80GB-SXM").tdp_w
    assert row["power_fraction"] == pytest.approx((290.74 + 338.60 + 362.98 + 318.71) / 4 / tdp_w, abs=0.005)


def test_grid_and_price_spot_checks(regions):
    """codecarbon's GCP table: us-west1 (The Dalles, Oregon) 94 g/kWh; EIA Electric Power Annual 2023:
    Oregon industrial 7.52 cents/kWh; Google 2024 Environmental Report: fleet PUE 1.10."""
    oregon = regions.set_index("region").loc["us-oregon"]
    assert oregon["grid_gco2_per_kwh"] == 94
    assert oregon["electricity_usd_per_kwh"] == pytest.approx(0.0752)
    assert oregon["pue"] == pytest.approx(1.10)


def test_dgx_a100_list_price_spot_check(ownership):
    """NVIDIA launched the DGX A100 (8x A100 40GB) at USD 199,000: 24,875 per GPU."""
    row = ownership.set_index("gpu").loc["A100-40GB"]
    assert row["server_usd_per_gpu"] == pytest.approx(199_000 / 8)


def test_each_regions_tariff_has_its_own_source_row(regions):
    """A price comes with a source of its own: no two regions share a price source, and Germany, France, China and
    the US average are no longer one shared 0.0927 (the old median fallback)."""
    priced = regions[regions["electricity_usd_per_kwh"].notna()]
    assert priced["source_price"].str.len().gt(40).all()
    assert priced["source_price"].is_unique
    by_region = dict(zip(regions["region"], regions["electricity_usd_per_kwh"], strict=True))
    # Bundesnetzagentur 19.63 ct/kWh and SDES 205 EUR/MWh (2023), each at 1.0813 USD/EUR; EIA 8.06 US cents
    assert by_region["germany"] == pytest.approx(0.1963 * 1.0813, abs=1e-4)
    assert by_region["france"] == pytest.approx(0.205 * 1.0813, abs=1e-4)
    assert by_region["us-average"] == 0.0806 and by_region["china"] == 0.088


def test_no_two_regions_share_a_fallback_price_silently(regions):
    """A region with no published tariff is priced at the stand-in region's, and says so (price_published False, a
    note naming the stand-in); every region with a tariff is priced at its own."""
    from gpuplan_core.pricing.energy import PRICE_STAND_IN_REGION, site_figures

    for r in regions.itertuples():
        f = site_figures(r.region, None, None, None)
        if pd.isna(r.electricity_usd_per_kwh):
            stand_in = regions.set_index("region").loc[PRICE_STAND_IN_REGION]
            assert not f.price_published and f.usd_per_kwh == stand_in.electricity_usd_per_kwh
            assert r.label in f.price_note and stand_in.label in f.price_note and f.price_note in f.source
        else:
            assert f.price_published and f.price_note == "" and f.usd_per_kwh == r.electricity_usd_per_kwh
    assert site_figures("india", None, 0.1, None).price_published  # your price is a price
