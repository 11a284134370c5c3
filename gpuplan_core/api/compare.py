"""Compare A vs B: each side built from the scenario's reports (memory, speed, price at its own layout), then the
typed difference and the verdict (report/compare.py)."""

from __future__ import annotations

from ..perf.replica import DEFAULT_GPU
from ..report.compare import CompareReport, Side, compare
from ..scenario.fields import MAX_LAYOUT_GPUS
from ..scenario.scenario import Scenario
from . import cost_report, memory_report, perf_report


def compare_side(sc: Scenario, offers) -> Side:
    """What Compare shows of one scenario on its GPU: what it runs on, memory and fit, and only where it fits,
    speed and price (priced at the layout that fits)."""
    from ..hardware.catalog import get_gpu
    from ..model.formats import get_format

    gpu = get_gpu(sc.parallelism.gpu or DEFAULT_GPU)
    sc = sc if sc.parallelism.gpu else sc.with_(gpu=gpu.gpu)
    mem = memory_report(sc)
    g = mem.gpu_fit(gpu.gpu)
    settings = {
        "GPUs": f"{sc.parallelism.gpus:,} x {g.label}",
        "Weights": f"{get_format(sc.formats.weights_format).label} weights",
    }
    if sc.job.mode == "inference":
        settings |= {
            "KV cache": f"{get_format(sc.formats.kv_format).label} KV cache",
            "Batch": f"batch {sc.request.batch}",
        }
    else:
        settings["Batch"] = f"micro-batch {sc.request.batch}"
    label = ", ".join(settings.values())
    out = Side(label=label, settings=settings, fits=g.fits, per_gpu_bytes=mem.per_gpu_bytes)
    if not g.fits:
        out.needs = (
            f"{g.min_gpus:,} x {g.label}" if g.min_gpus else f"more GPUs than any layout up to {MAX_LAYOUT_GPUS:,}"
        )
        return out
    if sc.job.mode == "inference":
        p = perf_report(sc, gpus=[gpu.gpu]).gpus[0]
        if p.fits:
            out.ttft_s, out.tpot_s = p.ttft_s, p.tpot_s
    from ..plan.site import pick_energy

    rows = [r for r in cost_report(sc, offers=offers, fixed_layout=True).offers if r.gpu == gpu.gpu]
    if rows and sc.job.mode == "inference":
        best = min(rows, key=lambda r: r.monthly_always_on_usd)
        out.monthly_usd, out.per_million_usd = best.monthly_always_on_usd, best.output_cost_per_million_usd
        if (e := pick_energy(sc, best)) is not None:
            out.energy_kwh, out.co2_kg = e.monthly_energy_kwh, e.monthly_co2_kg
            out.kwh_per_million = e.energy_kwh_per_million_output_tokens
    elif rows:
        best = min(rows, key=lambda r: r.run_cost_usd)
        out.run_usd = best.run_cost_usd
        if (e := pick_energy(sc, best)) is not None:
            out.energy_kwh, out.co2_kg = e.energy_kwh, e.co2_kg
    return out


def compare_report(a: Scenario, b: Scenario, offers, b_count_from_a: bool = True) -> CompareReport:
    """A against B. B's GPU count follows A's only while it fits: when B runs on another GPU at A's count and does
    not fit there, B takes the fewest GPUs of its type that hold it (and says so)."""
    from ..hardware.catalog import get_gpu

    a = a if a.parallelism.gpu else a.with_(gpu=DEFAULT_GPU)
    b = b if b.parallelism.gpu else b.with_(gpu=a.parallelism.gpu)
    notes: list[str] = []
    if b_count_from_a and b.parallelism.gpu != a.parallelism.gpu:
        g = memory_report(b).gpu_fit(get_gpu(b.parallelism.gpu).gpu)
        if not g.fits and g.min_layout is not None:
            lay = g.min_layout
            notes.append(
                f"B: {b.parallelism.gpus:,} x {g.label} (A's count) does not hold it; B uses {lay.gpus:,} x "
                f"{g.label}, the fewest that do."
            )
            b = b.with_(gpus=lay.gpus, tp=lay.tp, pp=lay.pp)
    sa, sb = compare_side(a, offers), compare_side(b, offers)
    return CompareReport(a=sa, b=sb, comparison=compare(sa, sb), notes=notes)
