"""The pricing CSV: one row per offer, validated row by row, never a crash on a user's file.

``load_pricing`` returns the good offers and a report of EVERY bad row (line number, column, what is
allowed) plus consistency warnings (spot above on-demand, per-GPU x GPUs != node price, stale rows).
``import_skypilot_vms`` turns a SkyPilot catalog ``vms.csv`` into offers (columns read by header name).
"""

from __future__ import annotations

import contextlib
import csv
import datetime as dt
import io
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..common.data import DATA_DIR
from ..common.errors import describe
from ..hardware.catalog import load_gpus, resolve_gpu_name

BillingModel = Literal[
    "on_demand", "spot", "reserved", "reserved_1y", "reserved_3y", "serverless_flex", "serverless_active"
]
BILLING_MODELS = list(BillingModel.__args__)
Rounding = Literal["up", "down", "unknown"]
IntraNodeLink = Literal["NVLink", "PCIe", "unknown"]
InterNodeNetwork = Literal["InfiniBand", "RoCE", "EFA", "Ethernet", "none", "unknown"]
RDMA_NETWORKS = ("InfiniBand", "RoCE", "EFA")
# A tightly coupled multi-node job (pipeline stages, training across nodes) needs a stated RDMA network of at least
# this much per node: A100-era HGX clusters shipped 4 x 100 Gbit/s (AWS p4d: 400 Gbit/s EFA); H100-era ones
# 8 x 400 (3,200 Gbit/s). Below it, or unstated, gradient and activation traffic would dominate.
FAST_NETWORK_GBIT_S = 400.0
MAX_PRICING_BYTES = 5_000_000
MAX_PRICING_ROWS = 20_000

REQUIRED_COLUMNS = ["offer_id", "provider", "product", "gpu", "gpus_per_node", "billing_model"]
PRICE_COLUMNS = ["price_per_gpu_hour_usd", "price_per_node_hour_usd"]
ALL_COLUMNS = [
    "offer_id",
    "provider",
    "product",
    "gpu",
    "gpu_variant",
    "gpu_memory_gb",
    "gpus_per_node",
    "billing_model",
    "commitment_months",
    "price_per_node_hour_usd",
    "price_per_gpu_hour_usd",
    "price_includes_host",
    "vcpus_per_node",
    "ram_gb_per_node",
    "region",
    "billing_increment_s",
    "min_billed_s",
    "partial_increment_rounding",
    "interruptible",
    "interruption_notice_s",
    "serverless_idle_timeout_default_s",
    "cold_start_billed",
    "egress_usd_per_gb",
    "max_gpus_per_node",
    "intra_node_link",
    "inter_node_network",
    "inter_node_gbit_s",
    "source_type",
    "source",
    "price_as_of",
    "retrieved_date",
    "notes",
    "interconnect_source",
    "interconnect_notes",
]


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
    price_per_node_hour_usd: float = Field(ge=0, le=100_000)
    price_per_gpu_hour_usd: float = Field(ge=0, le=100_000)
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

    def layout_problem(self, tp: int, pp: int) -> str | None:
        """Why one replica of tp x pp GPUs cannot run on this offer (None: it can). Tensor parallel stays within one
        machine, and above 2 needs NVLink; pipeline stages across machines need a fast network."""
        if tp > self.machine_gpus:
            return f"tensor parallel {tp} needs {tp} GPUs in one machine; this offer rents at most {self.machine_gpus}"
        if tp > 2 and self.intra_node_link != "NVLink":
            link = "PCIe" if self.intra_node_link == "PCIe" else "an unstated link"
            return f"tensor parallel {tp} needs NVLink; this offer's GPUs talk over {link}"
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


@dataclass
class RowIssue:
    line: int  # 1-based line in the file (the header is line 1)
    column: str
    message: str
    offer_id: str = ""

    def __str__(self) -> str:
        where = f"line {self.line}" if self.line else "file"
        col = f", column {self.column}" if self.column else ""
        return f"{where}{col}: {self.message}"


@dataclass
class PricingReport:
    offers: list[Offer]
    errors: list[RowIssue] = field(default_factory=list)
    warnings: list[RowIssue] = field(default_factory=list)
    rows_read: int = 0

    @property
    def ok(self) -> bool:
        return not self.errors


def _bool(v) -> bool | None:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    s = str(v).strip().lower()
    if s in ("true", "yes", "1", "y", "t"):
        return True
    if s in ("false", "no", "0", "n", "f"):
        return False
    if s == "":
        return None
    raise ValueError(f"{v!r} is not true or false")


def _num(v) -> float | None:
    if v is None:
        return None
    s = str(v).strip().replace("$", "").replace(",", "")
    if s == "":
        return None
    try:
        x = float(s)
    except ValueError:
        raise ValueError(f"{v!r} is not a number") from None
    if math.isnan(x) or math.isinf(x):
        raise ValueError(f"{v!r} is not a finite number")
    return x


NUMERIC = {
    "gpu_memory_gb",
    "gpus_per_node",
    "commitment_months",
    "price_per_node_hour_usd",
    "price_per_gpu_hour_usd",
    "vcpus_per_node",
    "ram_gb_per_node",
    "billing_increment_s",
    "min_billed_s",
    "interruption_notice_s",
    "serverless_idle_timeout_default_s",
    "egress_usd_per_gb",
    "max_gpus_per_node",
    "inter_node_gbit_s",
}
BOOLEAN = {"price_includes_host", "interruptible", "cold_start_billed"}


def resolve_offer_gpu(name: str, variant: str | None) -> str | None:
    """Catalog id for a pricing row's GPU: name + variant first ("H100" + "PCIe"), then the name."""
    if variant:
        hit = resolve_gpu_name(f"{name} {variant}")
        if hit:
            return hit
    return resolve_gpu_name(name)


def parse_row(raw: dict[str, str], line: int) -> tuple[Offer | None, list[RowIssue]]:
    issues: list[RowIssue] = []
    data: dict = {}
    raw = {k: ("" if v is None or (isinstance(v, float) and math.isnan(v)) else v) for k, v in raw.items()}
    oid = str(raw.get("offer_id") or "").strip()
    for col, val in raw.items():
        if col is None:
            issues.append(RowIssue(line, "", "more cells than columns in the header", oid))
            continue
        col = col.strip()
        try:
            if col in NUMERIC:
                data[col] = _num(val)
            elif col in BOOLEAN:
                b = _bool(val)
                if b is not None or col == "cold_start_billed":
                    data[col] = b
            else:
                data[col] = "" if val is None else str(val).strip()
        except ValueError as exc:
            issues.append(RowIssue(line, col, str(exc), oid))
    for col in REQUIRED_COLUMNS:
        if not data.get(col) and col not in [i.column for i in issues]:
            issues.append(RowIssue(line, col, "required, but empty", oid))
    gpu_listed = data.get("gpu") or ""
    if gpu_listed:
        gid = resolve_offer_gpu(gpu_listed, data.get("gpu_variant") or None)
        if gid is None:
            allowed = ", ".join(g.gpu for g in load_gpus())
            issues.append(
                RowIssue(line, "gpu", f"unknown GPU {gpu_listed!r}; allowed: {allowed} and usual aliases", oid)
            )
        else:
            data["gpu"], data["gpu_as_listed"] = gid, gpu_listed
    bm = data.get("billing_model")
    if bm and bm not in BILLING_MODELS:
        issues.append(
            RowIssue(line, "billing_model", f"{bm!r} is not allowed; allowed: {', '.join(BILLING_MODELS)}", oid)
        )
    per_gpu, per_node, gpn = (
        data.get("price_per_gpu_hour_usd"),
        data.get("price_per_node_hour_usd"),
        data.get("gpus_per_node"),
    )
    if per_gpu is None and per_node is None and not any(i.column in PRICE_COLUMNS for i in issues):
        issues.append(
            RowIssue(
                line, "price_per_gpu_hour_usd", "no price: give price_per_gpu_hour_usd or price_per_node_hour_usd", oid
            )
        )
    elif gpn and gpn > 0:
        if per_gpu is None and per_node is not None:
            data["price_per_gpu_hour_usd"] = per_node / gpn
        elif per_node is None and per_gpu is not None:
            data["price_per_node_hour_usd"] = per_gpu * gpn
    if data.get("partial_increment_rounding") in ("", None):
        data["partial_increment_rounding"] = "unknown"
    if issues:
        return None, issues
    try:
        return Offer(**data), []
    except ValidationError as exc:
        for e in exc.errors():
            col = ".".join(str(x) for x in e["loc"]) or ""
            msg = describe(ValidationError.from_exception_data("Offer", [e]))
            issues.append(RowIssue(line, col, msg.removeprefix(f"{col}: "), oid))
        return None, issues


def _sniff(text: str) -> tuple[str, list[RowIssue]]:
    first = text.splitlines()[0] if text else ""
    if first.count(",") >= 2:
        return ",", []
    for delim, name in ((";", "semicolons"), ("\t", "tabs"), ("|", "pipes")):
        if first.count(delim) >= 2:
            return delim, [RowIssue(1, "", f"the header is separated by {name}, not commas: read with {name}")]
    return ",", []


def load_pricing_text(text: str | bytes, max_age_days: int | None = 365, today: dt.date | None = None) -> PricingReport:
    """Parse a pricing CSV's text. Never raises for bad content: every problem goes in the report."""
    if isinstance(text, bytes):
        if len(text) > MAX_PRICING_BYTES:
            return PricingReport([], [RowIssue(0, "", f"file larger than {MAX_PRICING_BYTES:,} bytes")])
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError:
            return PricingReport([], [RowIssue(0, "", "not a UTF-8 text file (is it a spreadsheet? export it as CSV)")])
    text = text.lstrip("\ufeff")
    if len(text) > MAX_PRICING_BYTES:
        return PricingReport([], [RowIssue(0, "", f"file larger than {MAX_PRICING_BYTES:,} bytes")])
    if not text.strip():
        return PricingReport([], [RowIssue(0, "", "the file is empty")])
    delim, warnings = _sniff(text)
    try:
        rows = list(csv.reader(io.StringIO(text), delimiter=delim))
    except csv.Error as exc:
        return PricingReport([], [RowIssue(0, "", f"not a readable CSV ({exc})")])
    header = [c.strip() for c in rows[0]]
    body = [(i + 2, r) for i, r in enumerate(rows[1:]) if any(c.strip() for c in r)]
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    if not any(c in header for c in PRICE_COLUMNS):
        missing.append(" or ".join(PRICE_COLUMNS))
    if missing:
        return PricingReport(
            [],
            [RowIssue(1, c, "required column is missing from the header") for c in missing] + warnings,
            rows_read=len(body),
        )
    if len(body) > MAX_PRICING_ROWS:
        warnings.append(RowIssue(0, "", f"only the first {MAX_PRICING_ROWS:,} rows were read"))
        body = body[:MAX_PRICING_ROWS]
    offers, errors = [], []
    seen: dict[str, int] = {}
    for line, cells in body:
        if len(cells) != len(header):
            oid = cells[0].strip() if cells else ""
            errors.append(RowIssue(line, "", f"has {len(cells)} cells but the header has {len(header)} columns", oid))
            continue
        offer, issues = parse_row(dict(zip(header, cells, strict=True)), line)
        errors += issues
        if offer is None:
            continue
        if offer.offer_id in seen:
            errors.append(RowIssue(line, "offer_id", f"duplicate of line {seen[offer.offer_id]}", offer.offer_id))
            continue
        seen[offer.offer_id] = line
        offers.append(offer)
    warnings += consistency_warnings(offers, seen, max_age_days, today)
    return PricingReport(offers, errors, warnings, rows_read=len(body))


def consistency_warnings(
    offers: list[Offer], lines: dict[str, int], max_age_days: int | None, today: dt.date | None = None
) -> list[RowIssue]:
    today = today or dt.date.today()
    out = []
    for o in offers:
        line = lines.get(o.offer_id, 0)
        expected = o.price_per_gpu_hour_usd * o.gpus_per_node
        if expected and abs(expected - o.price_per_node_hour_usd) > 0.01 * max(expected, o.price_per_node_hour_usd):
            out.append(
                RowIssue(
                    line,
                    "price_per_node_hour_usd",
                    f"per-GPU {o.price_per_gpu_hour_usd:.4f} x {o.gpus_per_node:g} GPUs = {expected:.4f}, "
                    f"but the node price is {o.price_per_node_hour_usd:.4f}",
                    o.offer_id,
                )
            )
        d = o.price_date
        if d and d > today:
            out.append(RowIssue(line, "price_as_of", f"{d} is in the future", o.offer_id))
        elif d and max_age_days is not None and (today - d).days > max_age_days:
            out.append(
                RowIssue(line, "price_as_of", f"{(today - d).days} days old (older than {max_age_days})", o.offer_id)
            )
    on_demand = {
        (o.provider, o.gpu, o.region or "", o.gpus_per_node): o for o in offers if o.billing_model == "on_demand"
    }
    for o in offers:
        if o.billing_model != "spot":
            continue
        od = on_demand.get((o.provider, o.gpu, o.region or "", o.gpus_per_node))
        if od and o.price_per_gpu_hour_usd > od.price_per_gpu_hour_usd:
            out.append(
                RowIssue(
                    lines.get(o.offer_id, 0),
                    "price_per_gpu_hour_usd",
                    f"spot {o.price_per_gpu_hour_usd:.4f} is above on-demand {od.price_per_gpu_hour_usd:.4f} "
                    f"({od.offer_id})",
                    o.offer_id,
                )
            )
    return out


def load_pricing(path: str | Path | None = None, max_age_days: int | None = 365) -> PricingReport:
    p = Path(path) if path else DATA_DIR / "pricing.csv"
    try:
        data = p.read_bytes()
    except OSError as exc:
        return PricingReport([], [RowIssue(0, "", f"cannot read {str(p)!r} ({exc.strerror})")])
    return load_pricing_text(data, max_age_days=max_age_days)


def merge_offers(bundled: list[Offer], yours: list[Offer], yours_only: bool = False) -> list[Offer]:
    """The offers in use: yours added to the bundled ones, an offer of yours replacing a bundled offer with the
    same ``offer_id`` (your negotiated price for a listed product); or yours alone."""
    if yours_only:
        return list(yours)
    mine = {o.offer_id for o in yours}
    return [o for o in bundled if o.offer_id not in mine] + list(yours)


MAX_PRICE_OVERRIDES = 50


def parse_price_overrides(text: str | None) -> dict[str, float]:
    """'offer-id=2.10, other-id=0.85' (USD per GPU-hour) -> {offer id: price}. An entry that is not ``id=price``
    with a price from 0 to 100,000 raises a ValueError naming it."""
    out: dict[str, float] = {}
    for part in (text or "").replace(";", ",").split(","):
        part = part.strip()
        if not part:
            continue
        oid, sep, value = part.partition("=")
        oid = oid.strip()
        try:
            price = float(value)
        except ValueError:
            price = -1.0
        if not sep or not oid or not 0 <= price <= 100_000:
            raise ValueError(
                f"your prices: {part[:60]!r} is not 'offer-id=USD per GPU-hour' with a price from 0 to 100,000 "
                "(e.g. 'vast-h100-1-od=1.50, runpod-l40s-secure-od=0.80')"
            )
        out[oid] = price
    if len(out) > MAX_PRICE_OVERRIDES:
        raise ValueError(f"your prices: at most {MAX_PRICE_OVERRIDES} offers")
    return out


def apply_price_overrides(offers: list[Offer], overrides: dict[str, float]) -> tuple[list[Offer], list[str]]:
    """The offers with your price per GPU-hour where you gave one (the node price scales with it; the source says
    "your price" and keeps the catalog's), and a note for every id that matches no offer."""
    known = {o.offer_id for o in offers}
    out = []
    for o in offers:
        p = overrides.get(o.offer_id)
        if p is None:
            out.append(o)
            continue
        out.append(
            o.model_copy(
                update={
                    "price_per_gpu_hour_usd": p,
                    "price_per_node_hour_usd": p * o.gpus_per_node,
                    "user_price": True,
                    "source": f"your price (catalog: ${o.price_per_gpu_hour_usd:,.2f}/GPU-hour, {o.source})"[:2000],
                    "price_as_of": None,
                }
            )
        )
    unknown = sorted(set(overrides) - known)
    notes = (
        [f"Your prices: no offer is called {', '.join(unknown)}; see the offer ids on the Cost page."]
        if unknown
        else []
    )
    return out, notes


def offers_to_csv(offers: list[Offer]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=ALL_COLUMNS, extrasaction="ignore")
    w.writeheader()
    for o in offers:
        row = o.model_dump()
        row["gpu"] = o.gpu_as_listed or o.gpu
        w.writerow({k: ("" if v is None else str(v).lower() if isinstance(v, bool) else v) for k, v in row.items()})
    return buf.getvalue()


# ---- SkyPilot catalog import ---------------------------------------------------------------------


def import_skypilot_vms(text: str, provider: str, retrieved: str | None = None, source: str = "") -> PricingReport:
    """Offers from a SkyPilot ``vms.csv`` (columns read by header name; the clouds order them differently).

    Known traps handled: GCP prices the host VM and the GPUs in separate rows (a GPU row has an empty
    InstanceType; it is added to the host rows with the same GPU, count and region); RunPod's
    SpotPrice equals Price and Vast's is 0 (not real spot prices: skipped); fractional GPUs
    (AcceleratorCount < 1) are priced per whole GPU; an empty Price means no on-demand offer.
    """
    retrieved = retrieved or dt.date.today().isoformat()
    try:
        df = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, ValueError) as exc:
        return PricingReport([], [RowIssue(0, "", f"not a readable CSV ({str(exc).splitlines()[0]})")])
    need = ["InstanceType", "AcceleratorName", "AcceleratorCount", "Price"]
    missing = [c for c in need if c not in df.columns]
    if missing:
        return PricingReport([], [RowIssue(1, c, "required SkyPilot column is missing") for c in missing])
    get = lambda r, k: (r.get(k) or "").strip()  # noqa: E731
    gpu_parts: dict[tuple[str, str, str], float] = {}
    if provider == "gcp":
        for r in df.to_dict("records"):
            if not get(r, "InstanceType") and get(r, "AcceleratorName") and get(r, "Price"):
                with contextlib.suppress(ValueError):
                    key = (get(r, "AcceleratorName"), get(r, "AcceleratorCount"), get(r, "Region"))
                    gpu_parts[key] = float(get(r, "Price"))
    offers, errors, warnings = [], [], []
    for i, r in enumerate(df.to_dict("records")):
        line = i + 2
        itype, acc = get(r, "InstanceType"), get(r, "AcceleratorName")
        if not itype or not acc:
            continue  # GPU-only component rows (GCP) and CPU-only machines
        gid = resolve_gpu_name(acc)
        if gid is None:
            continue  # GPUs outside the catalog are not offers gpuplan can size
        try:
            count = float(get(r, "AcceleratorCount"))
        except ValueError:
            errors.append(RowIssue(line, "AcceleratorCount", f"{get(r, 'AcceleratorCount')!r} is not a number"))
            continue
        if count <= 0:
            continue
        region = get(r, "Region") or None
        includes_host = True
        notes = []
        for kind, col in (("on_demand", "Price"), ("spot", "SpotPrice")):
            raw = get(r, col)
            if not raw:
                continue
            try:
                price = float(raw)
            except ValueError:
                errors.append(RowIssue(line, col, f"{raw!r} is not a number"))
                continue
            if kind == "spot" and (price <= 0 or price == float(get(r, "Price") or -1)):
                continue  # RunPod spot == on-demand, Vast spot 0: no real spot offer
            if provider == "gcp":
                part = gpu_parts.get((acc, get(r, "AcceleratorCount"), get(r, "Region")))
                if part is not None and kind == "on_demand":
                    price += part
                    notes.append("GCP host VM + GPU component rows added")
                elif part is None:
                    includes_host = True
            per_gpu = price / count
            oid = f"{provider}-{itype}-{region or 'any'}-{get(r, 'AvailabilityZone') or ''}-{kind}".lower().replace(
                " ", ""
            )
            try:
                offers.append(
                    Offer(
                        offer_id=oid,
                        provider=provider,
                        product=itype,
                        gpu=gid,
                        gpu_as_listed=acc,
                        gpus_per_node=count,
                        billing_model=kind,
                        price_per_node_hour_usd=price,
                        price_per_gpu_hour_usd=per_gpu,
                        price_includes_host=includes_host,
                        region=region,
                        vcpus_per_node=_num(r.get("vCPUs")) if r.get("vCPUs") else None,
                        ram_gb_per_node=_num(r.get("MemoryGiB")) if r.get("MemoryGiB") else None,
                        interruptible=kind == "spot",
                        source_type="provider_catalog_snapshot",
                        source=source or f"SkyPilot catalog {provider}/vms.csv",
                        price_as_of="undated",
                        retrieved_date=retrieved,
                        notes="; ".join(notes + (["fractional GPU: price per whole GPU"] if count < 1 else [])),
                    )
                )
            except (ValidationError, ValueError) as exc:
                errors.append(RowIssue(line, col, describe(exc)))
    dedup: dict[str, Offer] = {}
    for o in offers:
        dedup.setdefault(o.offer_id, o)
    return PricingReport(list(dedup.values()), errors, warnings, rows_read=len(df))
