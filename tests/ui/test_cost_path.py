"""How far requests/day travels to the Cost page's chart: the files it reaches on the way, counted by running the
same calls the page makes (``cached.cost_views``, whose ``cheapest`` the page draws) under ``sys.setprofile``.

A value is followed, not a file list: the Scenario's ``Traffic.requests_per_day`` is the seed (every read of it is
seen); a gpuplan function that reads it, or is handed an object that carries it, is on its route, and what that
function returns carries it on, with every file it has passed through. An object passed on unchanged (the rows a
module sorts and wraps) adds the file it is handed to, and the file of a function on the route that hands it to another file. So a module that only re-wraps, or a view built in one file
and reshaped in another, is counted; one that never touches the value is not. The question's other parts (the
request, the formats) do not carry it, whatever they sit beside.

Today (Llama-3.1-70B, 50,000 requests a day of 8,000 input tokens), the route to the chart is 8 files, the issue's
goal (it was 10: plan/layouts.py, the search's shapes between search.py and rent.py, now in search.py; api/cost.py,
which re-wrapped cost_table's rows in the CostReport, now built by cost_table itself):
  scenario/deployment.py  Traffic.requests_per_day, peak_requests_per_s
  plan/search.py          served(): the replicas the peak needs, the latencies at that load (Layout, Served)
  pricing/billing.py      replicas_for_traffic(), monthly_always_on(), serverless_monthly()
  plan/rent.py            rent(): the offer renting those replicas, the Pick's monthly_usd (inference_candidates)
  results/plan.py         Pick, InferenceCostRow (properties the ranking reads)
  plan/cost.py            cost_table(): the row per offer, ranked, in the CostReport
  gpuplan_ui/cached.py    cost_views(): the CostViews the page reads (its cost_report calls api.cost_table)
  gpuplan_ui/figures_cost.py  cheapest_figure(): the bars
and then app_pages/Cost.py draws ``views.cheapest``. Since disaggregated prefill/decode (issue 28), two more: the
cost table weighs the split the answer weighs, so its offer's row is the split where that is cheaper (one answer on
the Overview and the Cost page):
  plan/disaggregated.py   disaggregated_pick(): the pools the peak needs, priced per pool
  model/arch.py           kv_bytes_per_token(): the KV transfer between the pools, read with the carried question
Since speculative decoding is weighed (a draft model, or the model's own MTP module), one more: the resolved model
handed on the route reaches the replica's workload, which reads its MTP module as the draft:
  perf/workload.py        workload_for(): the draft a replica of that model speculates with (model/draft.py)
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel

from gpuplan_core.interface.inputs import to_scenario
from gpuplan_core.scenario.deployment import Traffic
from gpuplan_ui import cached

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = tuple(str(ROOT / p) + "/" for p in ("gpuplan_core", "gpuplan_ui", "app_pages"))
FIELD_FILE = "gpuplan_core/scenario/deployment.py"
RPD = 50017  # each trace its own volume: the cached views of one already seen are not rebuilt
MOST_FILES = 11  # the route measured today (the module docstring): the 8, P/D's two, speculation's one


def _file(code) -> str | None:
    f = code.co_filename
    return f[len(str(ROOT)) + 1 :] if f.startswith(PACKAGES) else None


def _question_part(x) -> bool:
    """A part of the question (the Scenario's parts): an input, never a value derived from requests/day."""
    return type(x).__module__.startswith("gpuplan_core.scenario")


class Route:
    """Every object that carries requests/day, with the files it has come through."""

    def __init__(self):
        self.carried: dict[int, tuple[object, set[str]]] = {}  # id -> (the object, kept alive; its files)
        self.frames: dict[int, set[str]] = {}  # the frames on the route, by id: the files their values came through

    def files(self, x) -> set[str] | None:
        hit = self.carried.get(id(x))
        return hit[1] if hit is not None and hit[0] is x else None

    def _children(self, x) -> list:
        if isinstance(x, (list, tuple)):
            return list(x)
        if isinstance(x, dict):
            return list(x.values())
        if isinstance(x, BaseModel):
            return list(x.__dict__.values())
        if dataclasses.is_dataclass(x) and not isinstance(x, type):
            return [getattr(x, f.name) for f in dataclasses.fields(x)]
        return []

    def carry(self, x, files: set[str], handed_to: str | None = None, depth: int = 2) -> None:
        """``x`` (and what it holds) carries the value: new ones come through ``files``; those that carried it
        already are handed on to ``handed_to``."""
        if x is None or isinstance(x, (bool, int, str)) or _question_part(x):
            return
        known = self.files(x)
        if known is None:
            self.carried[id(x)] = (x, set(files))
        elif handed_to is not None:
            known.add(handed_to)
        if depth:
            for child in self._children(x):
                self.carry(child, files, handed_to, depth - 1)

    def _given(self, x, depth: int = 1) -> set[str]:
        """The files of what an argument carries (a list: of its items, which may have come further than it)."""
        out: set[str] = set()
        if depth and isinstance(x, (list, tuple)):
            for item in x[:64]:
                out |= self._given(item, depth - 1)
        return out or self.files(x) or set()

    def _handed(self, x, by: str) -> None:
        """``x`` (or a list's items) handed to another file by a function of ``by`` on the route: ``by`` counts."""
        for item in x[:64] if isinstance(x, (list, tuple)) else (x,):
            if (known := self.files(item)) is not None:
                known.add(by)

    def profile(self, frame, event, arg) -> None:
        if event == "call" and (f := _file(frame.f_code)) is not None:
            code = frame.f_code
            caller = frame.f_back
            by = _file(caller.f_code) if caller is not None and id(caller) in self.frames else None
            given: set[str] = set()
            for name in code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]:
                if name in frame.f_locals:
                    if by is not None and by != f:
                        self._handed(frame.f_locals[name], by)
                    given |= self._given(frame.f_locals[name])
            if given:
                self.frames[id(frame)] = given | {f}
        elif event == "return" and (seen := self.frames.pop(id(frame), None)) is not None:
            caller = frame.f_back
            to = _file(caller.f_code) if caller is not None else None
            self.carry(arg, seen, handed_to=to)
            if to is not None:
                self.frames.setdefault(id(caller), set()).update(self._given(arg) | seen | {to})

    def read(self, value, frame) -> None:
        """A read of ``Traffic.requests_per_day``: the value comes from the Scenario's field."""
        self.carry(value, {FIELD_FILE}, depth=0)
        if (f := _file(frame.f_code)) is not None:
            self.frames.setdefault(id(frame), set()).update({FIELD_FILE, f})


def _route_to_chart(link: dict) -> tuple[set[str], object]:
    sc, _ = to_scenario(link)
    route = Route()
    read = Traffic.__getattribute__

    def spy(self, name):
        value = read(self, name)
        if name == "requests_per_day":
            route.read(value, sys._getframe(1))
        return value

    Traffic.__getattribute__ = spy
    sys.setprofile(route.profile)
    try:
        views = cached.cost_views(sc.model_dump_json(), "bundled")
    finally:
        sys.setprofile(None)
        Traffic.__getattribute__ = read
    return route.files(views.cheapest) or set(), views


@pytest.fixture(scope="module")
def warm():
    """The replica judgements are remembered apart from the traffic's volume (plan/search.py): judged once here at
    another volume, so that the traced run re-judges nothing and the trace takes a fraction of a second."""
    cached.cost_views(to_scenario({"model": "Llama-3.1-70B", "rpd": 40000, "in": 8000})[0].model_dump_json(), "bundled")


def test_requests_per_day_reaches_the_cost_chart_through_at_most_the_files_counted(warm):
    files, views = _route_to_chart({"model": "Llama-3.1-70B", "rpd": RPD, "in": 8000})
    assert views.cheapest is not None
    assert FIELD_FILE in files and "gpuplan_ui/figures_cost.py" in files  # the field and the chart: followed
    assert "gpuplan_core/plan/rent.py" in files  # the monthly cost of the replicas the traffic needs
    assert len(files) <= MOST_FILES, sorted(files)


def test_the_route_does_not_count_what_the_value_never_reaches(warm):
    """The energy, owning and price tiers (plan/site.py) read requests/day for the report's JSON, not for the chart;
    the tables (tables_cost.py) show the same rows but are not the chart."""
    files, _ = _route_to_chart({"model": "Llama-3.1-70B", "rpd": RPD + 1, "in": 8000})
    assert not {"gpuplan_core/plan/site.py", "gpuplan_ui/tables_cost.py", "gpuplan_core/scenario/parts.py"} & files


def test_a_module_that_only_hands_the_rows_on_is_counted(warm, monkeypatch):
    """The guard cannot be fooled by a hop that computes nothing: a relay (code of a gpuplan_ui file) that takes the
    rows and hands them to the chart unchanged adds its file to the route."""
    from gpuplan_ui import figures_cost

    before, _ = _route_to_chart({"model": "Llama-3.1-70B", "rpd": RPD + 3, "in": 8000})
    relay: dict = {}
    source = "def relayed(rows, inference):\n    rows = list(rows)\n    return draw(rows, inference)\n"
    exec(compile(source, str(ROOT / "gpuplan_ui" / "relay.py"), "exec"), {"draw": figures_cost.cheapest_figure}, relay)
    monkeypatch.setattr(cached.figures_cost, "cheapest_figure", relay["relayed"])
    after, _ = _route_to_chart({"model": "Llama-3.1-70B", "rpd": RPD + 4, "in": 8000})
    assert after == before | {"gpuplan_ui/relay.py"}
