"""Shared by the core tests: hand-made memory reports (results/memory.py) for the code that reads them, and a
fitted deployment profile (scenario/profile.py)."""

from __future__ import annotations

import pytest

from gpuplan_core.api._shared import model_summary
from gpuplan_core.common.units import GB
from gpuplan_core.results.memory import GpuFit, Layout, MemoryReport, ModelSummary
from gpuplan_core.scenario.profile import DeploymentProfile
from gpuplan_core.scenario.scenario import Scenario


@pytest.fixture(scope="session")
def summary() -> ModelSummary:
    """Llama-3.1-8B's exact counts: the model summary every report starts with."""
    return model_summary(Scenario(preset="Llama-3.1-8B"))


@pytest.fixture
def gpu_fit():
    """A catalog row: ``budget_gb`` (10^9 B) a job may fill, the fewest GPUs that hold the budget (None: none)."""

    def make(gpu: str, min_gpus: int | None, budget_gb: float, **kw) -> GpuFit:
        row = dict(
            gpu=gpu,
            label=gpu,
            selected=False,
            vram_nominal_bytes=int(budget_gb / 0.9 * GB),
            vram_usable_bytes=int(budget_gb / 0.9 * GB),
            budget_bytes=int(budget_gb * GB),
            fits=min_gpus == 1,
            min_gpus=min_gpus,
            min_layout=None if min_gpus is None else Layout(gpus=min_gpus, tp=min_gpus, pp=1, dp=1),
            max_batch=0,
            max_context=0,
            kv_capacity_tokens=None,
        )
        return GpuFit(**{**row, **kw})

    return make


@pytest.fixture
def memory_report(summary):
    """A report of ``per_gpu_gb`` per GPU at one GPU (inference unless ``mode``), over the rows given."""

    def make(gpus: list[GpuFit], per_gpu_gb: float = 20.0, **kw) -> MemoryReport:
        report = dict(
            mode="inference",
            method="full",
            weights_format="bf16",
            kv_format="bf16",
            engine="vllm",
            context_tokens=2300,
            batch=8,
            layout=Layout(gpus=1, tp=1, pp=1, dp=1),
            scope="whole runtime",
            weights_bytes_total=2 * summary.params_total,
            components={},
            provenance={},
            offload="none",
            offloaded={},
            host_bytes_per_node=0,
            budgets={},
            per_gpu_bytes=int(per_gpu_gb * GB),
            total_bytes=int(per_gpu_gb * GB),
            memory_utilization=0.9,
            notes=[],
            gpus=gpus,
        )
        return MemoryReport(**summary.model_dump(), **{**report, **kw})

    return make


@pytest.fixture(scope="session")
def profile() -> DeploymentProfile:
    """A deployment profile fitted to a 7-run vLLM file of Llama-3.1-8B on one H100 SXM: its two constants are a
    request cost of 14.1 ms and a decode time factor of 1.18."""
    return DeploymentProfile(
        name="bench.jsonl",
        file_sha256="ab" * 32,
        file_format="json lines",
        model="Llama-3.1-8B",
        gpu="H100-SXM",
        tp=1,
        engine="vllm",
        runs=7,
        request_in_s=0.0141,
        decode_time_factor=1.18,
    )
