"""Data catalogs: the GPU table (data/gpus.csv) and the model presets (data/models.json).

GPU names are matched case-insensitively with the usual aliases ("H100", "H100-SXM",
"H100 SXM5 80GB", "A100-40GB", "RTX PRO 6000 Blackwell") by ``resolve_gpu``; the UI, the CLI and
the pricing loader all go through it.

The table holds the other accelerators people rent as well (``kind``): Google TPU v5e / v5p / v6e, AWS Trainium2
and Inferentia2, Intel Gaudi 3, each row with its vendor's figures and sources. The memory and roofline models
read them as they read a GPU (HBM, bandwidth, dense peaks, the scale-up link); their efficiency constants are the
defaults, and as no published measurement on them is in the calibration set, every estimate on them carries the
"no comparable measurement" band (perf/bands.py: each has its own ``architecture``, hence its own regimes).
The recommender leaves them out unless the scenario allows them (``Pricing.allow_accelerators``) or names one.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, PositiveFloat, PositiveInt, field_validator

from ..common.data import DATA_DIR, norm_name
from ..common.units import GB, TFLOP, GiB

MESH_PEERS = 7  # an 8-GPU Infinity Fabric platform (MI300X OAM): one link to each of the other 7
Kind = Literal["gpu", "tpu", "trainium", "inferentia", "gaudi"]
MESH_LINKS = ("Infinity Fabric", "RoCE")  # all-to-all: one share of the link to each of the 7 peers
SCALE_UP_LINKS = ("NVLink", "ICI", "NeuronLink", *MESH_LINKS)  # links that join every chip of a host (torus, mesh)


class GPU(BaseModel):
    """One GPU variant. Peaks are DENSE; sparse (2:4) figures are never used for speed."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    gpu: str
    family: str
    variant: str
    architecture: str = Field(description="GPU generation (Hopper, Ada, CDNA3 ...): the calibration regimes use it")
    aliases: tuple[str, ...] = ()
    vram_nominal_gb: PositiveFloat
    vram_usable_gib: PositiveFloat
    vram_usable_source: str
    memory_type: str
    bandwidth_gb_s: PositiveFloat
    bf16_dense_tflops: PositiveFloat
    fp8_dense_tflops: PositiveFloat | None = None
    int8_dense_tops: PositiveFloat | None = None
    fp4_dense_tflops: PositiveFloat | None = None
    fp32_dense_tflops: PositiveFloat | None = Field(
        None, description="set for GPUs without TF32 tensor cores (Volta, Turing): FP32 runs on CUDA cores"
    )
    link_gb_s_per_direction: PositiveFloat | None = None
    link_type: Literal["NVLink", "NVLink bridge", "Infinity Fabric", "ICI", "NeuronLink", "RoCE", "PCIe", ""] = Field(
        "",
        description="how the GPUs of one server reach each other: NVLink through NVSwitch (every pair at the "
        "link's bandwidth), an NVLink bridge (pairs only: beyond 2 GPUs traffic crosses PCIe), AMD Infinity Fabric "
        "(all-to-all), Google's ICI and AWS NeuronLink (a torus joining every chip of the host), Gaudi's on-chip "
        "RoCE ports (all-to-all between the 8 chips), or PCIe (the link column, where given, is the PCIe "
        "bandwidth); empty: NVLink if a link bandwidth is given, else PCIe",
    )
    tdp_w: PositiveFloat | None = Field(None, description="board power; None where the vendor publishes none")
    sources: str
    notes: str = ""
    kind: Kind = Field("gpu", description="GPU, or another accelerator (TPU, Trainium, Inferentia, Gaudi)")
    chips_per_host: PositiveInt | None = Field(
        None, description="chips one host (VM) of the vendor's platform carries; None for GPUs (it varies)"
    )

    @field_validator("kind", mode="before")
    @classmethod
    def _gpu_when_empty(cls, v):
        return "gpu" if v is None or (isinstance(v, str) and not v.strip()) else v

    @property
    def is_gpu(self) -> bool:
        return self.kind == "gpu"

    @property
    def ridge_flops_per_byte(self) -> float:
        """The roofline's ridge point at dense BF16: FLOPs per byte of HBM traffic above which a kernel is
        compute-bound. For a matmul of a batch of B tokens against 16-bit weights (2 B FLOPs per 2-byte weight
        read), B = this figure: the Scaling Book's critical batch size (TPU v5e: 197e12 / 819e9 = 240.5)."""
        return self.bf16_dense_tflops * TFLOP / self.bandwidth_bytes_per_s

    # --- units in bytes / seconds -------------------------------------------------------------
    @property
    def vram_nominal_bytes(self) -> float:
        """The vendor's label. Vendors' memory labels are binary in practice (an "80 GB" H100 has
        80 GiB of HBM), so the label is read as GiB."""
        return self.vram_nominal_gb * GiB

    @property
    def vram_usable_bytes(self) -> float:
        """What the CUDA runtime reports as total memory (ECC and driver reserve removed)."""
        return self.vram_usable_gib * GiB

    @property
    def bandwidth_bytes_per_s(self) -> float:
        return self.bandwidth_gb_s * GB

    @property
    def link_bandwidth_bytes_per_s(self) -> float | None:
        return None if self.link_gb_s_per_direction is None else self.link_gb_s_per_direction * GB

    def peer_link(self, gpus: int) -> tuple[str, float | None]:
        """("nvlink" or "pcie", bytes/s per direction each GPU can move to the others) for ``gpus`` GPUs
        reducing together. NVSwitch: the whole link to any peer. Infinity Fabric (and Gaudi's RoCE ports) is a
        mesh: a link of 1/7 of the total to each of the 7 others (8-GPU platform), so fewer GPUs use fewer links.
        ICI and NeuronLink (a torus) are read as a scale-up link at their per-direction bandwidth. PCIe's bandwidth
        is None where the row states none (the caller's default applies)."""
        kind = self.link_type or ("NVLink" if self.link_gb_s_per_direction else "PCIe")
        link = self.link_bandwidth_bytes_per_s
        if kind in MESH_LINKS and link:
            return "nvlink", min(link, (gpus - 1) * link / MESH_PEERS)
        if kind in SCALE_UP_LINKS or (kind == "NVLink bridge" and gpus <= 2):
            return "nvlink", link
        return "pcie", link if kind == "PCIe" else None

    def dense_peak_flops(self, math: str) -> tuple[float, str]:
        """Dense peak FLOP/s for a math format, falling back to the best supported one.

        Returns (flops_per_s, format actually used). FP32 runs as TF32 on tensor cores, taken as
        half the BF16 peak (true of A100, H100, L40S, L4, MI300X datasheets), except on GPUs without TF32
        (V100, T4), where it runs on CUDA cores at ``fp32_dense_tflops``.
        """
        if math == "fp32":
            if self.fp32_dense_tflops:
                return self.fp32_dense_tflops * TFLOP, "fp32"
            return self.bf16_dense_tflops * TFLOP / 2, "tf32"
        order = {"fp4": ["fp4", "fp8", "bf16"], "fp8": ["fp8", "bf16"], "int8": ["int8", "bf16"], "bf16": ["bf16"]}
        for fmt in order.get(math, ["bf16"]):
            value = {
                "fp4": self.fp4_dense_tflops,
                "fp8": self.fp8_dense_tflops,
                "int8": self.int8_dense_tops,
                "bf16": self.bf16_dense_tflops,
            }[fmt]
            if value:
                return value * TFLOP, fmt
        return self.bf16_dense_tflops * TFLOP, "bf16"

    @property
    def label(self) -> str:
        return f"{self.family} {self.variant}" if self.family != self.gpu else self.gpu


def load_efficiency() -> pd.DataFrame:
    """data/efficiency.csv: per GPU architecture and format family, the weight-read efficiency relative to 16-bit
    that published measurements pin, with the count and basis of each."""
    return pd.read_csv(DATA_DIR / "efficiency.csv")


@lru_cache(maxsize=1)
def weight_mbu_factors() -> dict[tuple[str, str], float]:
    """(GPU architecture, format family) -> weight-read efficiency vs 16-bit; elsewhere perf.py's defaults."""
    df = load_efficiency()
    df = df[df["weight_mbu_format_factor"].notna()]
    return {(r.architecture, r.format_family): float(r.weight_mbu_format_factor) for r in df.itertuples()}


@lru_cache(maxsize=1)
def moe_efficiency_factors() -> dict[tuple[str, str], float]:
    """(GPU architecture, format family) -> the routed experts' grouped-GEMM efficiency vs dense GEMMs (1 where
    no MoE measurement pins it)."""
    df = load_efficiency()
    if "moe_efficiency_factor" not in df:
        return {}
    df = df[df["moe_efficiency_factor"].notna()]
    return {(r.architecture, r.format_family): float(r.moe_efficiency_factor) for r in df.itertuples()}


@lru_cache(maxsize=4)
def load_gpus(path: str | None = None) -> tuple[GPU, ...]:
    df = pd.read_csv(path or DATA_DIR / "gpus.csv", dtype=str, keep_default_na=False)
    gpus = []
    for row in df.to_dict("records"):
        clean = {k: (v if v != "" else None) for k, v in row.items()}
        clean["aliases"] = tuple(a for a in (row.get("aliases") or "").split(";") if a)
        clean["notes"] = row.get("notes") or ""
        clean["link_type"] = row.get("link_type") or ""  # empty: NVLink with a link bandwidth, else PCIe
        gpus.append(GPU(**clean))
    return tuple(gpus)


@lru_cache(maxsize=4)
def _alias_map(path: str | None = None) -> dict[str, str]:
    out: dict[str, str] = {}
    for g in load_gpus(path):
        for key in (g.gpu, *g.aliases):
            out[norm_name(key)] = g.gpu
    return out


def catalog_gpus(allow_accelerators: bool = False, path: str | None = None) -> tuple[GPU, ...]:
    """The catalog rows a search may consider: GPUs, and the other accelerators only when allowed."""
    return tuple(g for g in load_gpus(path) if allow_accelerators or g.is_gpu)


def resolve_gpu_name(name: str, path: str | None = None) -> str | None:
    """Canonical GPU id for a user's spelling, or None when nothing matches."""
    return _alias_map(path).get(norm_name(name or ""))


def get_gpu(name: str, path: str | None = None) -> GPU:
    gid = resolve_gpu_name(name, path)
    if gid is None:
        allowed = ", ".join(g.gpu for g in load_gpus(path))
        raise ValueError(f"gpu: unknown GPU {name!r}; allowed: {allowed} (and their usual aliases)")
    return next(g for g in load_gpus(path) if g.gpu == gid)
