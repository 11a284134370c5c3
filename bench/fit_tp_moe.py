"""Tensor-parallel all-reduce and MoE step times against the published points: held-out error per regime.

    python bench/fit_tp_moe.py                    # current figures, held-out rows, per regime
    python bench/fit_tp_moe.py --baseline HEAD~3  # the same rows predicted by an older commit beside them
    python bench/fit_tp_moe.py --fit              # the MoE factors fitted on the TRAINING rows only

The split (/work/tools/split_rule.md): a row's source is its id up to the last '-'; within a source, rows sorted by
id, position i is held out when i % 3 == 2, else it is a training row. Constants are fitted on training rows only;
errors are reported on held-out rows. Error = (predicted - measured) / measured; |error| medians per regime.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def holdout_ids(ids) -> set[str]:
    """The split rule, locally (calibration.holdout_ids is the lead engineer's; same rule)."""
    by: dict[str, list[str]] = {}
    for i in ids:
        by.setdefault(i.rsplit("-", 1)[0], []).append(i)
    out = set()
    for rows in by.values():
        out |= {r for k, r in enumerate(sorted(rows)) if k % 3 == 2}
    return out


def rows() -> list[dict]:
    """Every calibration and serving point with its error and the groups it belongs to."""
    import pandas as pd

    from gpuplan_core.model.presets import get_preset
    from gpuplan_core.perf.calibration import (
        _format_of,
        calibration_table,
        load_measurements,
        load_serving_measurements,
        serving_table,
    )

    fmts = {
        r["id"]: str(r["weights_format"]) if isinstance(r["weights_format"], str) else "bf16"
        for r in load_measurements().to_dict("records")
    }
    out = []
    for r in calibration_table():
        moe = get_preset(r["model"]).is_moe
        tp = int(r["gpu_count"])
        out.append(
            {
                "id": r["id"],
                "table": "single",
                "regime": r["regime"],
                "groups": _groups(r["regime"], tp, moe, low_load=True, gpu=r["gpu"], fmt=fmts[r["id"]]),
                "error": r["error"],
            }
        )
    src = load_serving_measurements()
    lowest = {}  # the lowest load of each curve (engine, gpu, tp, model, lengths, metric)
    for s in src.to_dict("records"):
        key = (s["engine"], s["gpu"], s["tensor_parallel"], s["model_preset"], s["input_tokens"], s["output_tokens"])
        key += (s["metric"], s["load_kind"])
        lowest[key] = min(lowest.get(key, math.inf), float(s["load"]))
    meta = {s["id"]: s for s in src.to_dict("records")}
    for r in serving_table():
        s = meta[r["id"]]
        key = (s["engine"], s["gpu"], s["tensor_parallel"], s["model_preset"], s["input_tokens"], s["output_tokens"])
        key += (s["metric"], s["load_kind"])
        low = float(s["load"]) == lowest[key] and not math.isinf(float(s["load"]))
        moe = get_preset(r["model"]).is_moe
        out.append(
            {
                "id": r["id"],
                "table": "serving",
                "regime": f"serving: {r['regime']} · {r['metric']}",
                "groups": _groups(
                    f"serving {r['metric']}",
                    int(r["tp"]),
                    moe,
                    low_load=low,
                    gpu=r["gpu"],
                    fmt=_format_of(s["weights_format"]),
                ),
                "error": None if r["error"] is None or pd.isna(r["error"]) else float(r["error"]),
            }
        )
    return out


def _groups(regime: str, tp: int, moe: bool, *, low_load: bool, gpu: str, fmt: str) -> list[str]:
    from gpuplan_core.hardware.catalog import get_gpu
    from gpuplan_core.model.formats import get_format

    g = get_gpu(gpu)
    link = "NVLink/IF" if g.link_gb_s_per_direction else "PCIe"
    kind = "MoE" if moe else "dense"
    out = [f"{kind} TP{'1' if tp == 1 else '>1'} · {link}"]
    decode = any(w in regime for w in ("decode", "itl", "tpot"))
    if low_load and decode:
        out.append(f"{kind} TP{'1' if tp == 1 else '>1'} · low-load decode/ITL")
    if moe:
        phase = "decode" if decode else "prefill" if ("prefill" in regime or "ttft" in regime) else "throughput"
        family = get_format(fmt).family
        out.append(f"MoE · {g.architecture} · {family} · {phase}")
        if phase != "prefill":
            out.append(f"MoE · {g.architecture} · {family} · decode+throughput")
    return out


def use_assumptions(**fields) -> None:
    """Make ``fields`` the defaults every prediction takes (calibration_table and serving_table build their own
    PerfAssumptions): for fitting only."""
    from gpuplan_core.perf import calibration, replica
    from gpuplan_core.perf.efficiency import PerfAssumptions

    for k, v in fields.items():
        PerfAssumptions.model_fields[k].default = v
    PerfAssumptions.model_rebuild(force=True)
    replica.Replica.__init__.__defaults__ = (*replica.Replica.__init__.__defaults__[:-1], PerfAssumptions())
    calibration._serving_prediction.cache_clear()


def training_error(table: list[dict], group: str) -> tuple[int, float]:
    held = holdout_ids([r["id"] for r in table])
    errs = [abs(r["error"]) for r in table if r["id"] not in held and r["error"] is not None and group in r["groups"]]
    return len(errs), statistics.median(errs)


def fit_grid(name: str, values, group: str) -> float:
    """The value of PerfAssumptions field ``name`` with the lowest median |error| on the TRAINING rows of
    ``group``; prints the curve."""
    best = None
    for v in values:
        use_assumptions(**{name: v})
        n, err = training_error(rows(), group)
        print(f"  {name} = {v:.3g}: {n} training rows of '{group}', median |error| {err:.1%}")
        if best is None or err < best[1]:
            best = (v, err)
    use_assumptions(**{name: best[0]})
    return best[0]


def summarise(table: list[dict], base: dict[str, float | None] | None) -> list[dict]:
    held = holdout_ids([r["id"] for r in table])
    keys: dict[str, list[dict]] = {}
    for r in table:
        for k in [r["regime"], *r["groups"]]:
            keys.setdefault(k, []).append(r)
    out = []
    for k in sorted(keys):
        rs = [r for r in keys[k] if r["id"] in held and r["error"] is not None]
        if not rs:
            continue
        now = statistics.median(abs(r["error"]) for r in rs)
        line = {"group": k, "held_out": len(rs), "now": now, "bias": statistics.median(r["error"] for r in rs)}
        if base is not None:
            before = [abs(base[r["id"]]) for r in rs if base.get(r["id"]) is not None]
            line["before"] = statistics.median(before) if before else None
        out.append(line)
    return out


def baseline(ref: str) -> dict[str, float | None]:
    """The same rows predicted by the code and data of an older commit (extracted to a temporary folder)."""
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref], check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        env = dict(os.environ, PYTHONPATH=tmp)
        res = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "--json", "--root", tmp],
            check=True,
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp,
        )
    return json.loads(res.stdout)


def use_moe_factors(factors: dict[tuple[str, str], float]) -> None:
    from gpuplan_core.perf import calibration, efficiency

    efficiency.moe_efficiency_factors = lambda: dict(factors)
    calibration._serving_prediction.cache_clear()


def fit_moe_factor(arch: str, family: str, factors: dict, values) -> float:
    group = f"MoE · {arch} · {family} · decode+throughput"
    best = None
    for v in values:
        use_moe_factors({**factors, (arch, family): v})
        n, err = training_error(rows(), group)
        print(f"  {arch} · {family} factor {v:.2f}: {n} training rows of '{group}', median |error| {err:.1%}")
        if best is None or err < best[1]:
            best = (v, err)
    return best[0]


def fit() -> None:
    print("all-reduce: engine time per call beyond the kernel's microbenchmark (NVLink)")
    fit_grid("allreduce_sync_s", [i * 2e-6 for i in range(0, 16)], "dense TP>1 · low-load decode/ITL")
    print("MoE: time per routed expert per MoE layer and step (routing, permutation), low-load MoE decode")
    fit_grid("moe_overhead_s_per_expert_layer", [i * 0.05e-6 for i in range(0, 13)], "MoE TP>1 · low-load decode/ITL")
    print("MoE: grouped-GEMM efficiency vs dense, per GPU generation and format family")
    factors: dict = {}
    for arch, family in (("CDNA3", "FP8"), ("Hopper", "FP8"), ("Blackwell", "FP4"), ("Ampere", "16-bit")):
        factors[(arch, family)] = fit_moe_factor(arch, family, factors, [1.0, 0.8, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1])
    use_moe_factors(factors)
    print("  fitted:", factors)


def main() -> None:
    global ROOT
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline", help="a git ref whose predictions to show beside the current ones")
    ap.add_argument("--json", action="store_true", help="print {id: error} for every row (used by --baseline)")
    ap.add_argument("--root", help=argparse.SUPPRESS)
    ap.add_argument("--all", action="store_true", help="every regime, not only the TP and MoE ones")
    ap.add_argument("--fit", action="store_true", help="fit the constants on the training rows, then report")
    args = ap.parse_args()
    if args.root:
        ROOT = Path(args.root)
    sys.path.insert(0, str(ROOT))
    if args.fit:
        fit()
    table = rows()
    if args.json:
        print(json.dumps({r["id"]: r["error"] for r in table}))
        return
    base = baseline(args.baseline) if args.baseline else None
    print(f"held-out median |error| per regime ({len(holdout_ids([r['id'] for r in table]))} held-out rows)")
    head = f"{'regime / group':<62} {'n':>3} {'before':>8} {'now':>8} {'bias now':>9}"
    print(head)
    print("-" * len(head))
    for line in summarise(table, base):
        g = line["group"]
        if not args.all and not any(w in g for w in ("TP", "MoE", "serving")):
            continue
        before = line.get("before")
        b = f"{before:8.1%}" if before is not None else " " * 8
        print(f"{g:<62} {line['held_out']:>3} {b} {line['now']:8.1%} {line['bias']:+9.1%}")


if __name__ == "__main__":
    main()
