"""scenario/profile.py: a fitted deployment profile kept by content hash, found by a link's key, applied to a
scenario (its two constants), and said to be missing when this server lacks it."""

import pytest

from gpuplan_core.pricing.store import open_store
from gpuplan_core.scenario.profile import (
    apply_profile,
    find_profile,
    keep_profile,
    read_profile,
)
from gpuplan_core.scenario.scenario import Scenario


def test_kept_found_and_read_back(tmp_path, profile):
    store = open_store(folder=tmp_path)
    kept = keep_profile(profile, store)
    assert kept.kind == "profile" and len(kept.key) == 16 and kept.sha256 == profile.sha256
    assert find_profile(kept.key, store) == (profile, None)
    assert read_profile(profile.text()) == profile


def test_a_key_this_server_lacks_or_a_pricing_file_s_is_no_profile(tmp_path):
    store = open_store(folder=tmp_path)
    found, note = find_profile("0123456789abcdef", store)
    assert found is None and "does not hold" in note and "uncalibrated" in note
    prices = store.put("offer_id,provider\n", "prices.csv", "upload")
    assert find_profile(prices.key, store)[0] is None
    assert find_profile("", store) == (None, None)
    with pytest.raises(ValueError, match="not a deployment profile"):
        read_profile('{"kind": "gpuplan-scenario"}')


def test_applied_it_sets_the_two_constants_and_names_what_differs(profile):
    sc, notes = apply_profile(Scenario(preset="Llama-3.1-8B", gpu="H100-SXM"), profile)
    assert (sc.assumptions.request_in_s, sc.assumptions.decode_time_factor) == (0.0141, 1.18)
    assert notes == [f"Calibrated to your deployment: {profile.summary()}."]
    _, notes = apply_profile(Scenario(preset="Llama-3.1-8B", gpu="A100-80GB-SXM"), profile)
    assert "Fitted on another setup: GPU H100-SXM (the scenario: A100-80GB-SXM)" in notes[0]
