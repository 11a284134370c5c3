"""The published serving measurements (data/serving_measurements.csv): every row names its source, its engine
version and how the benchmark client sent load, and resolves to a bundled model preset and GPU."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from gpuplan_core.common.data import DATA_DIR
from gpuplan_core.hardware.catalog import get_gpu
from gpuplan_core.model.presets import get_preset

ARRIVALS = {"closed", "poisson", "gamma", "all_at_once", "not_stated"}
METRICS = {"ttft", "itl", "tpot", "output_tokens_per_s"}
STATISTICS = {"mean", "value", "median", "p50", "p90", "p95", "p99"}  # lmdeploy rows say median


@pytest.fixture(scope="module")
def rows() -> pd.DataFrame:
    return pd.read_csv(DATA_DIR / "serving_measurements.csv", keep_default_na=False, dtype=str)


def test_the_load_columns_are_at_the_end_of_the_header(rows):
    assert list(rows.columns[-3:]) == ["arrival", "length_spread", "length_dataset"]


def test_ids_are_unique_and_grouped_by_source_prefix(rows):
    assert rows["id"].is_unique
    assert rows["id"].str.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*-\d{3}").all()


def test_every_row_names_its_source_engine_and_version(rows):
    for col in ("source", "engine", "engine_version", "setup"):
        assert (rows[col].str.strip() != "").all(), col


def test_arrival_is_one_of_the_documented_kinds(rows):
    assert set(rows["arrival"]) <= ARRIVALS
    burst = rows["load"] == "inf"
    assert (rows.loc[burst, "arrival"] == "all_at_once").all()  # load=inf means every request queued at once
    assert (rows.loc[rows["arrival"] == "closed", "load_kind"] == "concurrency").all()
    assert (rows.loc[rows["arrival"].isin(["poisson", "gamma"]), "load_kind"] == "request_rate").all()


def test_length_spread_is_a_fraction_or_empty_with_a_dataset_named(rows):
    for spread, dataset in zip(rows["length_spread"], rows["length_dataset"], strict=True):
        if spread == "":
            assert dataset != ""
        else:
            assert 0.0 <= float(spread) < 1.0
            assert dataset == ""  # a spread is for synthetic lengths; dataset lengths have none


def test_every_preset_and_gpu_resolves(rows):
    for name in sorted(set(rows["model_preset"])):
        assert get_preset(name).name == name
    for name in sorted(set(rows["gpu"])):
        assert get_gpu(name).gpu == name


def test_values_lengths_and_loads_are_positive(rows):
    assert (rows["measured"].astype(float) > 0).all()
    assert (rows["input_tokens"].astype(int) > 0).all() and (rows["output_tokens"].astype(int) > 0).all()
    loads = rows["load"].astype(float)
    assert ((loads > 0) & ~loads.isna()).all()
    assert all(math.isinf(x) or x == int(x) for x in loads[rows["load_kind"] == "concurrency"])
    stated = rows["requests"] != ""
    assert (rows.loc[stated, "requests"].astype(int) > 0).all()
    assert set(rows["metric"]) <= METRICS and set(rows["statistic"]) <= STATISTICS
    assert set(rows["load_kind"]) == {"concurrency", "request_rate"}
    assert set(rows["unit"]) <= {"ms", "s", "tok/s"}


def test_tensor_parallel_fits_the_gpus(rows):
    tp, n = rows["tensor_parallel"].astype(int), rows["gpu_count"].astype(int)
    assert ((tp >= 1) & (n % tp == 0)).all()
