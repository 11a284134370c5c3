"""Typed results of the api: what the app reads by attribute and the CLI writes as ``model_dump()`` JSON.

Keys and their order are the CLI's stable JSON (README): a report flattens its main GPU's fields into the top level.
Units live in the names: ``_bytes`` are bytes, ``_s`` seconds, ``_per_s`` per second.
"""

from __future__ import annotations

from pydantic import model_serializer

from ..results.memory import GpuFit, Layout, MemoryReport, ModelSummary  # noqa: F401  (moved; re-exported)
from ..results.perf import GpuPerf, NoFit, PerfBands, PhaseReport, SweepPoint  # noqa: F401  (their old home)


class PerfReport(ModelSummary):
    """The scenario's GPU (``main``, flattened into the top level of the JSON) and every GPU asked for."""

    main: GpuPerf | NoFit
    gpus: list[GpuPerf | NoFit]

    @model_serializer(mode="wrap")
    def _flat(self, handler):
        d = handler(self)
        main = d.pop("main")
        gpus = d.pop("gpus")
        return {**d, **main, "gpus": gpus}
