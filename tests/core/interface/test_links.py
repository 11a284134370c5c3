"""The scenario file carries the pricing file the link names (links.scenario_file / scenario_pricing_file)."""

import json

from gpuplan_core.interface.inputs import DEFAULTS, to_scenario
from gpuplan_core.interface.links import read_scenario_file, scenario_file, scenario_pricing_file
from gpuplan_core.pricing.store import content_hash

CSV = "offer_id,provider\r\nteam-1,acme\r\n"


def test_the_scenario_file_carries_the_pricing_file_and_its_hash():
    values = {**DEFAULTS, "pricefile": content_hash(CSV)[:16]}
    sc, _ = to_scenario(values)
    text = scenario_file(values, sc, "Cost", ("team.csv", CSV))
    doc = json.loads(text)
    assert doc["pricing_file"] == {"name": "team.csv", "sha256": content_hash(CSV), "csv": CSV}
    assert doc["inputs"]["pricefile"] == content_hash(CSV)[:16]
    assert scenario_pricing_file(text) == (("team.csv", CSV), [])
    back, notes = read_scenario_file(text)
    assert back["pricefile"] == content_hash(CSV)[:16] and not notes  # the extra key is not an unknown input


def test_a_scenario_file_without_a_pricing_file_or_with_a_broken_one():
    sc, _ = to_scenario(DEFAULTS)
    assert "pricing_file" not in json.loads(scenario_file(DEFAULTS, sc))
    assert scenario_pricing_file(scenario_file(DEFAULTS, sc)) == (None, [])
    broken = json.dumps({"kind": "gpuplan-scenario", "pricing_file": {"csv": 3}})
    assert scenario_pricing_file(broken) == (
        None,
        ["scenario file: 'pricing_file' must be an object with its 'csv' text; its prices are not used"],
    )
    assert scenario_pricing_file("not json") == (None, [])
