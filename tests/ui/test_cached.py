"""The cached views are typed: frozen dataclasses read by attribute (a string key fails), picklable, and built from
the report they sit beside."""

import dataclasses
import pickle

import pytest

from gpuplan_core import api, load_gpus
from gpuplan_core.interface.inputs import to_scenario
from gpuplan_ui import cached


def _typed(view) -> None:
    assert dataclasses.is_dataclass(view) and view.__dataclass_params__.frozen
    with pytest.raises(TypeError):
        view["figure"]  # noqa: B018 -- a typed view is not subscriptable
    with pytest.raises(dataclasses.FrozenInstanceError):
        view.figure = None
    back = pickle.loads(pickle.dumps(view))  # st.cache_data would need it; a copy keeps every field
    assert [f.name for f in dataclasses.fields(back)] == [f.name for f in dataclasses.fields(view)]


def test_memory_and_perf_views_are_typed_and_match_their_reports():
    sc, _ = to_scenario({})
    key = sc.model_dump_json()
    mem = api.memory_report(sc)
    views = cached.memory_views(key)
    _typed(views)
    assert isinstance(views, cached.MemoryViews)
    assert len(views.gpus.frame) == len(mem.gpus)  # one row per GPU type the budget is held against
    assert len(views.components.frame) == len(mem.components)
    assert [t.name for t in views.components_figure.data] == list(mem.components)

    pv = cached.perf_views(key, "H100-SXM")
    assert isinstance(pv, cached.PerfViews) and pv.perf.gpu == "H100-SXM" and pv.perf.fits
    assert pv.roofline is not None and pv.phases is not None
    assert (pv.sweep is None) == (pv.perf.max_batch == 1)
    pickle.loads(pickle.dumps(pv))


def test_gpu_views_hold_one_catalog_row_per_gpu_type():
    views = cached.gpu_views()
    assert isinstance(views, cached.GpuViews)
    assert len(views.catalog.frame) == len(list(load_gpus()))
    with pytest.raises(TypeError):
        views["catalog"]  # noqa: B018
