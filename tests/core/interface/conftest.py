"""Shared by the interface tests: a link's parameters read as the app reads them (links.read_link, then
inputs.to_scenario), and a set of input values written as a link and read back."""

from urllib.parse import parse_qsl

import pytest

from gpuplan_core.interface.inputs import to_scenario
from gpuplan_core.interface.links import link_query, read_link


@pytest.fixture
def from_link():
    """from_link({key: text}) -> (input values, the Scenario's flat fields, every note the link and the scenario
    gave)."""

    def read(params: dict[str, str]):
        values, notes = read_link(params)
        sc, more = to_scenario(values)
        return values, sc.flat(), notes + more

    return read


@pytest.fixture
def round_trip():
    """round_trip(values) -> the values a link written from them reads back as (and that link's notes)."""

    def again(values: dict):
        back, notes = read_link(dict(parse_qsl(link_query(values))))
        return back, notes

    return again
