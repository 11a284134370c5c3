"""The pricing CSV: one row per offer, validated row by row, never a crash on a user's file.

``load_pricing`` returns the good offers and a report of EVERY bad row (line number, offer, column, what is
allowed) plus consistency warnings (spot above on-demand, per-GPU x GPUs != node price, stale rows).
A price of zero or below is a row error: an offer is never free. ``offers_to_csv`` writes offers back in the
same columns (the template the Data page offers).
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import math
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from ..common.data import DATA_DIR
from ..common.errors import describe
from ..hardware.catalog import load_gpus, resolve_gpu_name
from .offers import BILLING_MODELS, Offer

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


@dataclass
class RowIssue:
    line: int  # 1-based line in the file (the header is line 1)
    column: str
    message: str
    offer_id: str = ""

    def __str__(self) -> str:
        where = f"line {self.line}" if self.line else "file"
        offer = f" (offer {self.offer_id})" if self.offer_id else ""
        col = f", column {self.column}" if self.column else ""
        return f"{where}{offer}{col}: {self.message}"


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


def cell_number(v) -> float | None:
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
    """One CSV row (column -> cell) as an offer, or None and every problem found in it (a row with any problem
    is not used). The price columns must be above 0; a missing one is derived from the other and the GPU count."""
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
                data[col] = cell_number(val)
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
    for col, per in zip(PRICE_COLUMNS, ("GPU", "node"), strict=True):
        if (price := data.get(col)) is not None and price <= 0:
            issues.append(
                RowIssue(line, col, f"{price:g} is not allowed; allowed: above 0 (> 0 USD per {per}-hour)", oid)
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


def offers_to_csv(offers: list[Offer]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=ALL_COLUMNS, extrasaction="ignore")
    w.writeheader()
    for o in offers:
        row = o.model_dump()
        row["gpu"] = o.gpu_as_listed or o.gpu
        w.writerow({k: ("" if v is None else str(v).lower() if isinstance(v, bool) else v) for k, v in row.items()})
    return buf.getvalue()
