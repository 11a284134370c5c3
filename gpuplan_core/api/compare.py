"""Compare A vs B: each side is the one answer to its scenario (plan/answer.py: the pick's GPU, count, layout,
memory per GPU, latency and cost, exactly what the Overview shows for it), then the typed difference and the verdict
(report/compare.py). A side pinned to a GPU type (and count) is the layout search restricted to it, and says so."""

from __future__ import annotations

from ..common.text import counted
from ..hardware.catalog import get_gpu
from ..memory.request import pick_request
from ..model.formats import get_format
from ..report.compare import CompareReport, Side, compare
from ..results.plan import replica_split
from ..scenario.scenario import Scenario
from .cost import answer_report
from .memory import memory_report


def _pinned(sc: Scenario) -> str | None:
    """What the user pinned of a side, in words ('H100 SXM', '8 x H100 SXM'); None: the search chose freely."""
    par = sc.parallelism
    if not par.gpu:
        return None
    label = get_gpu(par.gpu).label
    return f"{par.gpus:,} x {label}" if par.gpus > 1 else label


def _layout_words(par) -> str:
    """A layout as set, in words: 'TP 1', 'TP 2 x PP 2'."""
    return f"TP {par.tp}" + (f" x PP {par.pp}" if par.pp > 1 else "")


def _split(sc: Scenario, p) -> str:
    """How the pick splits its GPUs, in words that read alone: 'one GPU', '6 replicas of 2 GPUs (TP 2)', 'TP 2 x PP 2
    x DP 16, ZeRO-0' (training)."""
    if sc.job.mode != "inference":
        req = pick_request(sc, p)
        return f"TP {req.parallelism.tp} x PP {req.parallelism.pp} x DP {req.dp}, ZeRO-{req.parallelism.zero_stage}"
    n = p.replica_gpus
    one = "one GPU" if n == 1 else f"{n} GPUs ({replica_split(p)})"
    return one if p.replicas == 1 else f"{p.replicas:,} replicas of {one}"


def compare_side(sc: Scenario, offers, answer=None) -> Side:
    """One side: the answer to its scenario (``answer``, when the caller has it for these offers). What it runs on,
    memory per GPU at the pick's layout, and the pick's latency, price and energy; without a pick, why not (and the
    memory engine's need at the scenario's own layout)."""
    ans = answer if answer is not None else answer_report(sc, offers=offers)
    pinned = _pinned(sc)
    how = f"pinned to {pinned}: the layout search on that GPU" if pinned else "the answer: the layout search's pick"
    p = ans.pick
    settings = {}
    if p is not None:
        label = get_gpu(p.gpu).label
        settings["GPUs"] = f"{p.gpus:,} x {label}"
        settings["Layout"] = _split(sc, p)
        fmt = p.weights_format
    else:
        settings["GPUs"] = pinned or "any GPU"
        fmt = sc.formats.weights_format
    settings["Weights"] = f"{get_format(fmt).label} weights"
    if sc.job.mode == "inference":
        settings |= {
            "KV cache": f"{get_format(sc.formats.kv_format).label} KV cache",
            "Batch": f"batch {sc.request.batch}",
        }
    else:
        settings["Batch"] = f"micro-batch {sc.request.batch_or_one}"
    out = Side(
        label=", ".join(v for k, v in settings.items() if (k, v) != ("Layout", "one GPU")),
        settings=settings,
        fits=p is not None,
        per_gpu_bytes=ans.memory_per_gpu_bytes if p is not None else memory_report(sc).per_gpu_bytes,
        how=how,
        pinned=pinned is not None,
    )
    if p is None:
        out.needs = ans.message or "no configuration fits and meets the targets"
        return out
    out.gpu, out.gpus = p.gpu, p.gpus
    out.ttft_s, out.tpot_s = p.ttft_s, p.tpot_s
    e = ans.energy
    if sc.job.mode == "inference":
        out.monthly_usd, out.per_million_usd = p.monthly_usd, p.output_cost_per_million_usd
        if e is not None:
            out.energy_kwh, out.co2_kg = e.monthly_energy_kwh, e.monthly_co2_kg
            out.kwh_per_million = e.energy_kwh_per_million_output_tokens
    else:
        out.run_usd = p.run_cost_usd
        if e is not None:
            out.energy_kwh, out.co2_kg = e.energy_kwh, e.co2_kg
    return out


def compare_report(a: Scenario, b: Scenario, offers, b_count_from_a: bool = True, answer_a=None) -> CompareReport:
    """A against B, each the answer to its scenario (``answer_a``: A's, when the caller has it). B's GPU count
    follows A's only while it runs: when B is pinned to another GPU type, inherits A's count and the search finds
    nothing there, B is the search on its type at the count it chooses (and says so)."""
    notes: list[str] = []
    sb = compare_side(b, offers)
    moved = b.parallelism.gpu and b.parallelism.gpu != a.parallelism.gpu
    if b_count_from_a and moved and not sb.fits and b.parallelism.gpus > 1:
        free = b.with_(gpus=1, tp=1, pp=1)
        sf = compare_side(free, offers)
        if sf.fits:
            par = b.parallelism
            notes.append(
                f"B: A's layout ({counted(par.gpus, 'GPU')}, {_layout_words(par)}) does not run on the "
                f"{get_gpu(par.gpu).label}; B is the search on that GPU at the layout it chooses "
                f"({sf.settings['GPUs']}, {sf.settings['Layout']})."
            )
            sb = sf
    sa = compare_side(a, offers, answer_a)
    return CompareReport(a=sa, b=sb, comparison=compare(sa, sb), notes=notes)
