"""What every API function starts from: the scenario, the model's summary every report carries, and the catalog
rows a scenario's views list."""

from __future__ import annotations

from typing import Any

from ..hardware.catalog import catalog_gpus, get_gpu
from ..results.memory import model_summary  # noqa: F401  (every report's first keys; the results own it)
from ..scenario.scenario import Scenario


def scenario_of(s: Scenario | dict[str, Any]) -> Scenario:
    return s if isinstance(s, Scenario) else Scenario(**s)  # None is a value: no target, no traffic, any GPU


def catalog_of(sc: Scenario) -> tuple:
    """The catalog rows a scenario's views list: GPUs, the other accelerators when allowed, and the one it names."""
    rows = catalog_gpus(sc.pricing.allow_accelerators)
    named = sc.parallelism.gpu and get_gpu(sc.parallelism.gpu)
    return rows if not named or named in rows else (*rows, named)
