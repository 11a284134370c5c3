"""Offers from a SkyPilot catalog ``vms.csv`` (github.com/skypilot-org/skypilot-catalog)."""

from __future__ import annotations

import contextlib
import datetime as dt
import io

import pandas as pd
from pydantic import ValidationError

from ..common.errors import describe
from ..hardware.catalog import resolve_gpu_name
from .csv_file import PricingReport, RowIssue, cell_number
from .offers import Offer


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
            if not price > 0:
                errors.append(
                    RowIssue(line, col, f"{price:g} is not allowed; allowed: above 0 (> 0 USD per machine-hour)")
                )
                continue
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
                        vcpus_per_node=cell_number(r.get("vCPUs")) if r.get("vCPUs") else None,
                        ram_gb_per_node=cell_number(r.get("MemoryGiB")) if r.get("MemoryGiB") else None,
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
