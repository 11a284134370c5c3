"""Typed results of the api: what the app reads by attribute and the CLI writes as ``model_dump()`` JSON.

Keys and their order are the CLI's stable JSON (README): a report flattens its main GPU's fields into the top level.
Units live in the names: ``_bytes`` are bytes, ``_s`` seconds, ``_per_s`` per second.
"""

from __future__ import annotations

from pydantic import Field, model_serializer

from ..results.base import _Report
from ..results.perf import GpuPerf, NoFit, PerfBands, PhaseReport, SweepPoint  # noqa: F401  (their old home)
from ..scenario.fields import MAX_LAYOUT_GPUS


class ModelSummary(_Report):
    """The model as resolved (preset, Hugging Face config or a bare size) and its exact counts."""

    model: str
    model_source: str
    approximate: bool = Field(description="architecture derived from a bare parameter count")
    params_total: int
    params_active: int
    kv_cache_bytes_per_token: float = Field(description="whole model, all layers, in the scenario's KV format")
    layers: int
    hidden_size: int
    attention_heads: int
    kv_heads: int
    head_dim: int | None = Field(description="None for MLA (the latent replaces per-head K/V)")
    mla: bool
    moe_experts: int
    max_context_tokens: int


class Layout(_Report):
    gpus: int
    tp: int
    pp: int
    dp: int


class GpuFit(_Report):
    """One catalog GPU against the scenario's memory budget."""

    gpu: str
    label: str
    selected: bool
    vram_nominal_bytes: int
    vram_usable_bytes: int
    budget_bytes: int = Field(description="usable VRAM x memory utilization")
    fits: bool = Field(description="the complete budget at the scenario's layout fits")
    min_gpus: int | None = Field(
        description=f"GPUs of the smallest layout that fits; None: none up to {MAX_LAYOUT_GPUS:,}"
    )
    min_layout: Layout | None
    max_batch: int = Field(description="largest batch at the scenario's context and layout")
    max_context: int = Field(description="longest context at the scenario's batch and layout")
    kv_capacity_tokens: int | None = Field(description="inference only: tokens of KV cache that fit")


class MemoryReport(ModelSummary):
    """The memory budget of the scenario's layout by component, and fit / min GPUs / max batch per GPU."""

    mode: str
    method: str
    weights_format: str
    kv_format: str
    engine: str
    context_tokens: int
    batch: int
    layout: Layout
    scope: str
    weights_bytes_total: int
    components: dict[str, int] = Field(description="per GPU, whole runtime")
    provenance: dict[str, str] = Field(description="per component: 'exact: ...' or 'estimated: ...'")
    offload: str
    offloaded: dict[str, int] = Field(description="per GPU's share held in host RAM instead")
    host_bytes_per_node: int
    budgets: dict[str, int] = Field(description="per GPU by scope")
    per_gpu_bytes: int
    total_bytes: int
    memory_utilization: float
    notes: list[str]
    gpus: list[GpuFit]

    @property
    def fewest(self) -> GpuFit | None:
        """The GPU type that holds the job on the fewest GPUs (of equals, the one with the most room per GPU); None
        when no layout holds it. The answer and the chart name this one."""
        held = [g for g in self.gpus if g.min_gpus]
        return min(held, key=lambda g: (g.min_gpus, -g.budget_bytes)) if held else None

    def gpu_fit(self, gpu: str) -> GpuFit:
        return next(g for g in self.gpus if g.gpu == gpu)

    @property
    def model_states_bytes(self) -> int | None:
        """Training: weights, gradients and optimizer states per GPU (before activations); None for inference."""
        return self.budgets.get("model states")


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
