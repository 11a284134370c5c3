"""One rentable offer (``Offer``): its billing model, machine and network, and how old its price is.

The pricing CSV that offers come from is read and checked in ``csv_file``; your own prices in ``overrides``;
SkyPilot's catalogs in ``skypilot``; the bills in ``billing``.
"""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

BillingModel = Literal[
    "on_demand", "spot", "reserved", "reserved_1y", "reserved_3y", "serverless_flex", "serverless_active"
]
BILLING_MODELS = list(BillingModel.__args__)
Rounding = Literal["up", "down", "unknown"]
IntraNodeLink = Literal["NVLink", "ICI", "NeuronLink", "RoCE", "PCIe", "unknown"]
# Links that join every accelerator of a machine (NVSwitch, a TPU / Trainium torus, Gaudi's all-to-all RoCE ports):
# tensor parallel above 2 needs one.
SCALE_UP_LINKS = ("NVLink", "ICI", "NeuronLink", "RoCE")
InterNodeNetwork = Literal["InfiniBand", "RoCE", "EFA", "Ethernet", "none", "unknown"]
RDMA_NETWORKS = ("InfiniBand", "RoCE", "EFA")
# A tightly coupled multi-node job (pipeline stages, training across nodes) needs a stated RDMA network of at least
# this much per node: A100-era HGX clusters shipped 4 x 100 Gbit/s (AWS p4d: 400 Gbit/s EFA); H100-era ones
# 8 x 400 (3,200 Gbit/s). Below it, or unstated, gradient and activation traffic would dominate.
FAST_NETWORK_GBIT_S = 400.0
MAX_PRICE_USD_PER_HOUR = 100_000  # per GPU or per node: anything above is a typo


class Offer(BaseModel):
    """One rentable offer. Empty cells mean unknown (None), never zero."""

    model_config = ConfigDict(frozen=True, extra="ignore", str_strip_whitespace=True)

    offer_id: str = Field(min_length=1, max_length=200)
    provider: str = Field(min_length=1, max_length=100)
    product: str = Field(min_length=1, max_length=300)
    gpu: str  # canonical catalog id after alias resolution
    gpu_as_listed: str = ""
    gpu_variant: str | None = None
    gpu_memory_gb: float | None = Field(None, gt=0, le=10_000)
    gpus_per_node: float = Field(gt=0, le=1024)
    billing_model: BillingModel
    commitment_months: float | None = Field(None, ge=0, le=120)
    # a price is above zero: an offer is never free (a 0 in a file is a typo or a placeholder, not a price)
    price_per_node_hour_usd: float = Field(gt=0, le=MAX_PRICE_USD_PER_HOUR)
    price_per_gpu_hour_usd: float = Field(gt=0, le=MAX_PRICE_USD_PER_HOUR)
    price_includes_host: bool = True
    vcpus_per_node: float | None = Field(None, ge=0)
    ram_gb_per_node: float | None = Field(None, ge=0)
    region: str | None = None
    billing_increment_s: float | None = Field(None, gt=0, le=31_536_000)
    min_billed_s: float | None = Field(None, ge=0, le=31_536_000)
    partial_increment_rounding: Rounding = "unknown"
    interruptible: bool = False
    interruption_notice_s: float | None = Field(None, ge=0)
    serverless_idle_timeout_default_s: float | None = Field(None, ge=0, le=86_400)
    cold_start_billed: bool | None = None
    egress_usd_per_gb: float | None = Field(None, ge=0, le=100)
    # what one machine can be rented with, and how its GPUs and machines are connected ("unknown" allowed)
    max_gpus_per_node: float | None = Field(None, gt=0, le=1024)
    intra_node_link: IntraNodeLink = "unknown"
    inter_node_network: InterNodeNetwork = "unknown"
    inter_node_gbit_s: float | None = Field(None, gt=0, le=1_000_000)
    interconnect_source: str = Field("", max_length=2000)
    interconnect_notes: str = Field("", max_length=2000)
    source_type: str | None = None
    source: str = Field("", max_length=2000)
    price_as_of: str | None = None
    user_price: bool = Field(False, description="the price is the user's own (an override), not the catalog's")
    retrieved_date: str | None = None
    notes: str = ""

    @field_validator("intra_node_link", "inter_node_network", mode="before")
    @classmethod
    def _unknown_when_empty(cls, v):
        return "unknown" if v is None or (isinstance(v, str) and not v.strip()) else v

    @field_validator("gpu_variant", "region", "source_type", "price_as_of", "retrieved_date", mode="before")
    @classmethod
    def _empty_is_none(cls, v):
        return None if v is None or (isinstance(v, str) and not v.strip()) else v

    @field_validator("price_as_of", "retrieved_date")
    @classmethod
    def _date(cls, v):
        if v is None or v == "undated":
            return v
        try:
            dt.date.fromisoformat(v)
        except ValueError:
            raise ValueError(f"{v!r} is not a date (YYYY-MM-DD or 'undated')") from None
        return v

    @property
    def is_serverless(self) -> bool:
        return self.billing_model.startswith("serverless")

    @property
    def machine_gpus(self) -> int:
        """The most GPUs of this offer one machine (or one serverless worker) can have."""
        return int(self.max_gpus_per_node or self.gpus_per_node)

    @property
    def fast_network(self) -> bool:
        """A stated RDMA network of at least FAST_NETWORK_GBIT_S per node: multi-node jobs allowed."""
        return self.inter_node_network in RDMA_NETWORKS and (self.inter_node_gbit_s or 0) >= FAST_NETWORK_GBIT_S

    def layout_problem(self, tp: int, pp: int, ep: int = 1) -> str | None:
        """Why one replica of tp x pp GPUs (an expert-parallel serving replica: ep GPUs at tp = pp = 1) cannot run on
        this offer (None: it can). Tensor parallel, and expert parallel's all-to-alls, stay within one machine, and
        above 2 GPUs need NVLink (or another scale-up link: ICI, NeuronLink, Gaudi's RoCE mesh); pipeline stages
        across machines need a fast network. The reason names the layout's own parallelism."""
        n, what = tp * ep, ("expert parallel" if ep > 1 else "tensor parallel")
        if n > self.machine_gpus:
            return f"{what} {n} needs {n} GPUs in one machine; this offer rents at most {self.machine_gpus}"
        if n > 2 and self.intra_node_link not in SCALE_UP_LINKS:
            link = "PCIe" if self.intra_node_link == "PCIe" else "an unstated link"
            return f"{what} {n} needs NVLink; this offer's GPUs talk over {link}"
        if pp > 1 and (self.is_serverless or not self.fast_network):
            net = self.inter_node_network if self.inter_node_network != "unknown" else "no stated network"
            return f"{pp} pipeline stages span machines: needs a fast RDMA network; this offer has {net}"
        return None

    @property
    def price_date(self) -> dt.date | None:
        for v in (self.price_as_of, self.retrieved_date):
            if v and v != "undated":
                return dt.date.fromisoformat(v)
        return None


STALE_AFTER_DAYS = 90


def price_age_days(price_as_of: str | None, today: dt.date | None = None) -> int | None:
    """Days since the price's own date; None when the source gives none ('undated')."""
    if not price_as_of or price_as_of == "undated":
        return None
    return ((today or dt.date.today()) - dt.date.fromisoformat(price_as_of)).days


def staleness(price_as_of: str | None, today: dt.date | None = None, after_days: int = STALE_AFTER_DAYS) -> str:
    """'stale' past `after_days`, 'undated' without a date, '' otherwise (shown beside every offer)."""
    age = price_age_days(price_as_of, today)
    if age is None:
        return "undated"
    return "stale" if age > after_days else ""


def merge_offers(bundled: list[Offer], yours: list[Offer], yours_only: bool = False) -> list[Offer]:
    """The offers in use: yours added to the bundled ones, an offer of yours replacing a bundled offer with the
    same ``offer_id`` (your negotiated price for a listed product); or yours alone."""
    if yours_only:
        return list(yours)
    mine = {o.offer_id for o in yours}
    return [o for o in bundled if o.offer_id not in mine] + list(yours)
