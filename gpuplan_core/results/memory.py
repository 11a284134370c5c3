"""Typed results of the memory engine and of the layout search's view of memory: the model's summary, the budget
of a layout, each GPU type's fit and the layout the search would run on it (``memory --json`` is a MemoryReport's
``model_dump()``; the README lists its keys). Bytes are integers of bytes."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..model.arch import kv_bytes_per_token, params_active, params_total
from ..model.formats import get_format
from ..scenario.fields import MAX_LAYOUT_GPUS
from ..scenario.scenario import Scenario
from .base import _Report


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


class Layout(_Report):
    """GPUs of a layout and how they split: tp x pp x dp (x cp, training) GPUs."""

    gpus: int
    tp: int
    pp: int
    dp: int
    ep: int | None = Field(
        None,
        description="expert parallel: the routed experts spread over this many of the dp ranks (a serving replica's "
        "attention data-parallel ranks at tp = pp = 1, or training's EP group); None: none",
    )

    @property
    def text(self) -> str:
        """The split in words: 'TP 2 x PP 2 x DP 16', 'TP 1 x PP 4 x DP 16 (EP 8)', an expert-parallel replica's
        'EP 8 (attention DP)' (its ep GPUs at tp = pp = 1, as ``plan.layout_label`` names it)."""
        ep = self.ep or 1
        if ep > 1 and self.tp * self.pp == 1 and self.dp == ep:
            return f"EP {ep} (attention DP)"
        return f"TP {self.tp} x PP {self.pp} x DP {self.dp}" + (f" (EP {ep})" if ep > 1 else "")


class SearchFit(_Report):
    """One GPU type as the layout search (plan/recommend.py) would run the scenario: the answer's pick on the pick's
    type, else the cheapest configuration of that type in the plan's cost table (one meeting the targets where one
    does). ``gpus`` None: the search has no candidate on this type, and ``note`` says why."""

    gpus: int | None = Field(None, description="GPUs rented (every replica, whole nodes); None: no candidate")
    layout: str | None = Field(None, description="'2 x B200, TP 2' (one serving replica); training adds ZeRO")
    tp: int | None = None
    pp: int | None = None
    dp: int | None = Field(None, description="data-parallel ranks of the memory layout (serving: 1 per replica)")
    ep: int | None = Field(None, description="expert parallel (Pick.ep): serving, a replica of ep GPUs; None: none")
    zero_stage: int | None = None
    per_gpu_bytes: int | None = Field(None, description="the complete budget per GPU at that layout")
    meets_targets: bool | None = None
    answer: bool = Field(False, description="this is the answer's pick")
    note: str = Field("", description="why there is no candidate, or what the candidate misses")


class GpuFit(_Report):
    """One catalog GPU against the memory budget of the report's layout, and how the layout search would run it."""

    gpu: str
    label: str
    selected: bool
    vram_nominal_bytes: int
    vram_usable_bytes: int
    budget_bytes: int = Field(description="usable VRAM x memory utilization")
    fits: bool = Field(description="the complete budget at the report's layout fits")
    min_gpus: int | None = Field(
        description="memory only: GPUs of the smallest layout whose budget fits (not the plan's count, which is "
        f"``search.gpus``); None: none up to {MAX_LAYOUT_GPUS:,}"
    )
    min_layout: Layout | None = Field(description="memory only: that smallest layout")
    max_batch: int = Field(description="largest batch at the scenario's context and the report's layout")
    max_context: int = Field(description="longest context at the scenario's batch and the report's layout")
    kv_capacity_tokens: int | None = Field(description="inference only: tokens of KV cache that fit")
    search: SearchFit | None = Field(None, description="the layout search on this type; None: not searched")


class PoolMemory(_Report):
    """One pool of a disaggregated (P/D) answer and the memory one GPU of one of its workers holds: the memory
    engine's budget (memory/pools.py) at that worker's layout, the scenario's lengths and batch."""

    role: Literal["prefill", "decode"]
    workers: int
    tp: int = Field(description="GPUs of one worker (tensor parallel)")
    layout: str = Field(description="one worker: '1 x H100-SXM, TP 1'")
    per_gpu_bytes: int = Field(description="the complete budget per GPU of one worker")
    budget_bytes: int = Field(description="what one GPU of the type may fill (usable VRAM x utilization)")


class AnswerLayout(_Report):
    """The layout the one answer runs (plan/answer.py's pick) and memory per GPU there: the Memory page's headline."""

    gpu: str
    label: str
    gpus: int = Field(description="GPUs the answer rents: every replica, whole nodes (the Overview's count)")
    replicas: int
    layout: Layout = Field(description="the budget's layout: one replica (serving), the whole job (training)")
    zero_stage: int | None = None
    micro_batch: int
    weights_format: str
    per_gpu_bytes: int = Field(description="= the answer's memory_per_gpu_bytes")
    budget_bytes: int = Field(description="what one GPU of the type may fill (usable VRAM x utilization)")
    where: str = Field(description="the layout in words, as the answer states it")


class MemoryReport(ModelSummary):
    """The memory budget of one layout by component, and fit / min GPUs / max batch per GPU type.

    Built from the scenario alone (``layout_source`` 'scenario'), the layout is the scenario's own. Built with the
    answer (api.memory_report with offers), the layout is the one the answer runs, ``answer`` describes it,
    ``scenario_per_gpu_bytes`` is the need at the scenario's own layout (one GPU unless set) and each GPU type
    carries the layout search's ``search``."""

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
    host_note: str | None = Field(
        None,
        description="training: what lives in host RAM (offload, activation offloading, a paged optimizer) and "
        "what each machine needs for it, in one sentence; null when nothing does",
    )
    budgets: dict[str, int] = Field(description="per GPU by scope")
    per_gpu_bytes: int
    total_bytes: int
    memory_utilization: float
    notes: list[str]
    gpus: list[GpuFit]
    layout_source: Literal["scenario", "answer"] = Field(
        "scenario", description="whose layout the budget is of: the scenario's own, or the answer's pick's"
    )
    answer: AnswerLayout | None = Field(None, description="the answer's layout; None: not searched, or no pick")
    answer_message: str | None = Field(None, description="searched without a pick: why nothing qualifies")
    scenario_per_gpu_bytes: int | None = Field(
        None, description="with the answer: the need per GPU at the scenario's own layout (one GPU unless set)"
    )
    pools: list[PoolMemory] = Field(
        default_factory=list,
        exclude_if=lambda v: not v,  # in the JSON only for a disaggregated answer
        description="a disaggregated answer's pools, prefill then decode, each worker's memory per GPU (the decode "
        "worker's is ``answer.per_gpu_bytes``); empty otherwise",
    )

    @property
    def fewest(self) -> GpuFit | None:
        """The GPU type that holds the job on the fewest GPUs by memory alone (of equals, the one with the most room
        per GPU); None when no layout holds it."""
        held = [g for g in self.gpus if g.min_gpus]
        return min(held, key=lambda g: (g.min_gpus, -g.budget_bytes)) if held else None

    def gpu_fit(self, gpu: str) -> GpuFit:
        return next(g for g in self.gpus if g.gpu == gpu)

    @property
    def model_states_bytes(self) -> int | None:
        """Training: weights, gradients and optimizer states per GPU (before activations); None for inference."""
        return self.budgets.get("model states")
