"""What every API function starts from: the scenario, the model's summary every report carries, and the catalog
rows a scenario's views list."""

from __future__ import annotations

from typing import Any

from ..hardware.catalog import catalog_gpus, get_gpu
from ..model.arch import kv_bytes_per_token, params_active, params_total
from ..model.formats import get_format
from ..results.memory import ModelSummary
from ..scenario.scenario import Scenario


def scenario_of(s: Scenario | dict[str, Any]) -> Scenario:
    return s if isinstance(s, Scenario) else Scenario(**s)  # None is a value: no target, no traffic, any GPU


def model_summary(sc: Scenario) -> ModelSummary:
    """The model as resolved, with its exact counts (every report starts with these keys)."""
    m = sc.model()
    kvf = get_format(sc.formats.kv_format)
    return ModelSummary(
        model=m.name,
        model_source=m.source,
        approximate=m.approximate,
        params_total=params_total(m),
        params_active=params_active(m),
        kv_cache_bytes_per_token=kv_bytes_per_token(m, kvf.bytes_per_value),
        layers=m.num_layers,
        hidden_size=m.hidden_size,
        attention_heads=m.num_attention_heads,
        kv_heads=m.num_kv_heads,
        head_dim=None if m.is_mla else m.d,
        mla=m.is_mla,
        moe_experts=m.num_experts,
        max_context_tokens=m.max_context_tokens,
    )


def catalog_of(sc: Scenario) -> tuple:
    """The catalog rows a scenario's views list: GPUs, the other accelerators when allowed, and the one it names."""
    rows = catalog_gpus(sc.pricing.allow_accelerators)
    named = sc.parallelism.gpu and get_gpu(sc.parallelism.gpu)
    return rows if not named or named in rows else (*rows, named)
