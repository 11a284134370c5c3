"""The public API: scenario in, plain JSON-able dicts out. Pages, the CLI and notebooks call these.

Every report is a dict whose keys are documented in the README ("JSON output"); byte counts are
integers of bytes, times are seconds, money is US dollars.
"""

from __future__ import annotations

from typing import Any

from .catalog import load_gpus
from .formats import get_format
from .memory import evaluate_catalog, memory_budget
from .model import kv_bytes_per_token, params_active, params_total
from .scenario import Scenario
from .units import GB, GiB


def scenario_of(s: Scenario | dict[str, Any]) -> Scenario:
    return s if isinstance(s, Scenario) else Scenario(**{k: v for k, v in s.items() if v is not None})


def model_summary(sc: Scenario) -> dict[str, Any]:
    m = sc.model()
    kvf = get_format(sc.kv_format)
    return {
        "model": m.name,
        "model_source": m.source,
        "approximate": m.approximate,
        "params_total": params_total(m),
        "params_active": params_active(m),
        "kv_cache_bytes_per_token": kv_bytes_per_token(m, kvf.bytes_per_value),
        "layers": m.num_layers,
        "hidden_size": m.hidden_size,
        "attention_heads": m.num_attention_heads,
        "kv_heads": m.num_kv_heads,
        "head_dim": None if m.is_mla else m.d,
        "mla": m.is_mla,
        "moe_experts": m.num_experts,
        "max_context_tokens": m.max_context_tokens,
    }


def memory_report(s: Scenario | dict[str, Any]) -> dict[str, Any]:
    """Memory budget of the scenario's layout, and fit / min GPUs / max batch / max context per GPU."""
    sc = scenario_of(s)
    m = sc.model()
    req = sc.memory_request()
    budget = memory_budget(m, req)
    fits = evaluate_catalog(m, req, load_gpus())
    selected = {g.gpu for g in sc.selected_gpus()} if sc.gpu else set()
    return {
        **model_summary(sc),
        "mode": req.mode,
        "method": req.method,
        "weights_format": req.weights_format,
        "kv_format": req.kv_format,
        "context_tokens": req.context_tokens,
        "batch": req.batch,
        "layout": {"gpus": req.gpus, "tp": req.tp, "pp": req.pp, "dp": req.dp},
        "scope": budget.scope,
        "components": {k: round(v) for k, v in budget.components.items()},
        "budgets": {k: round(v) for k, v in budget.budgets.items()},
        "per_gpu_bytes": round(budget.per_gpu_bytes),
        "total_bytes": round(budget.total_bytes),
        "memory_utilization": req.assumptions.memory_utilization,
        "notes": budget.notes,
        "gpus": [
            {
                "gpu": f.gpu.gpu,
                "label": f.gpu.label,
                "selected": f.gpu.gpu in selected,
                "vram_nominal_bytes": round(f.gpu.vram_nominal_bytes),
                "vram_usable_bytes": round(f.gpu.vram_usable_bytes),
                "budget_bytes": round(f.budget_bytes),
                "fits": f.fits,
                "min_gpus": f.min_gpus,
                "min_layout": None if f.min_layout is None else vars(f.min_layout),
                "max_batch": f.max_batch,
                "max_context": f.max_context,
                "kv_capacity_tokens": f.kv_capacity_tokens,
            }
            for f in fits
        ],
    }


def _gb(n: float) -> str:
    return f"{n / GB:,.2f} GB ({n / GiB:,.2f} GiB)"


def format_report(command: str, r: dict[str, Any]) -> str:
    if command == "memory":
        lines = [
            f"{r['model']}: {r['params_total']:,} parameters ({r['params_active']:,} active)"
            + (" [approximate architecture]" if r["approximate"] else ""),
            f"KV cache: {r['kv_cache_bytes_per_token']:,.0f} bytes per token ({r['kv_format']})",
            f"{r['mode']} ({r['method']}), weights {r['weights_format']}, context {r['context_tokens']:,}, "
            f"batch {r['batch']}, layout {r['layout']}",
            f"Per-GPU budget, scope '{r['scope']}':",
        ]
        lines += [f"  {k:<28} {_gb(v)}" for k, v in r["components"].items()]
        lines.append(f"  {'total per GPU':<28} {_gb(r['per_gpu_bytes'])}")
        lines.append(f"  {'total, all GPUs':<28} {_gb(r['total_bytes'])}")
        for scope, v in r["budgets"].items():
            lines.append(f"  scope '{scope}': {_gb(v)} per GPU")
        lines += [f"note: {n}" for n in r["notes"]]
        lines.append(f"{'GPU':<16} {'fits':<5} {'min GPUs':>8} {'max batch':>10} {'max context':>12}")
        for g in r["gpus"]:
            lines.append(
                f"{g['gpu']:<16} {'yes' if g['fits'] else 'no':<5} {g['min_gpus'] or '-':>8} "
                f"{g['max_batch']:>10,} {g['max_context']:>12,}"
            )
        return "\n".join(lines)
    return str(r)
