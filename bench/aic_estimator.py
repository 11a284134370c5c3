"""NVIDIA aiconfigurator's answer for one published serving run (data/serving_measurements.csv), from its own
estimator: ``backend.run_agg`` of ``aiconfigurator_core`` (what ``aiconfigurator cli estimate --mode agg`` calls,
with its default ``ctx_tokens`` = the prompt) on the database ``current`` for the run's GPU and engine, the run's
model from the package's bundled configs, tensor parallel (MoE layers tensor-parallel too: the published runs use
``-tp`` without expert parallelism), weights and KV formats (``fp8`` checkpoints that are block-wise are read from
the checkpoint's config). It has no queue and no request rate, so a run's load becomes a batch:

- a closed loop of C clients: batch C;
- every request at once (a burst): the largest batch of its own agg sweep's grid (1 ... 512) whose KV cache
  fits, at most the burst's size; no first-token time (that is the burst's queue);
- a request rate: the smallest grid batch b with b >= rate x (TTFT + TPOT x (output - 1)) (Little's law;
  none before the memory runs out: above its capacity, no answer).

Its one TTFT and TPOT answer the runs' means and medians (not p99), its tokens/s the output throughput. Used by
bench/bench_aiconfigurator.py; install (bench only): ``pip install aiconfigurator-core==0.12.0``.
"""

from __future__ import annotations

import argparse
import logging
import math
import shutil
import sys
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from gpuplan_core.perf import serving_calibration as cal

INSTALL = "pip install aiconfigurator-core==0.12.0"
SYSTEMS = {
    "H100-SXM": "h100_sxm",
    "H200": "h200_sxm",
    "B200": "b200_sxm",
    "A100-80GB-SXM": "a100_sxm",
    "L40S": "l40s",
    "RTX-PRO-6000": "rtx_pro_6000_server",
}
MODELS = {
    "Llama-3.1-8B": "meta-llama/Meta-Llama-3.1-8B",
    "Llama-3.1-70B": "meta-llama/Meta-Llama-3.1-70B",
    "Llama-3.1-405B": "meta-llama/Meta-Llama-3.1-405B",
    "Qwen3-8B": "Qwen/Qwen3-8B",
    "Qwen3-32B": "Qwen/Qwen3-32B",
    "DeepSeek-V3": "deepseek-ai/DeepSeek-V3",
    "Mixtral-8x7B-v0.1": "mistralai/Mixtral-8x7B-v0.1",
}
# aiconfigurator's agg sweep grid (base_backend.find_best_agg_result_under_constraints), up to its default 512
BATCH_GRID = (*range(1, 16), *range(16, 32, 4), *range(32, 64, 8), *range(64, 256, 16), *range(256, 512, 32), 512)
MEAN_STATS = ("mean", "median", "p50")
METRICS = {"ttft": "ttft_ms", "itl": "tpot_ms", "tpot": "tpot_ms", "output_tokens_per_s": "tokens_s"}


def load_sdk():
    """aiconfigurator_core's estimator entry points, or exit with how to install it."""
    try:
        from importlib.metadata import version

        from aiconfigurator_core.sdk import common, utils
        from aiconfigurator_core.sdk.backends.factory import get_backend
        from aiconfigurator_core.sdk.config import ModelConfig, RuntimeConfig
        from aiconfigurator_core.sdk.config_builders import build_model_config
        from aiconfigurator_core.sdk.models import check_is_moe, get_model
        from aiconfigurator_core.sdk.models.helpers import resolve_context_fmha_by_data, resolve_nvfp4_for_system
        from aiconfigurator_core.sdk.perf_database import get_database
    except ImportError as e:
        sys.exit(f"aiconfigurator-core is not installed ({e}); install it (bench only) with: {INSTALL}")
    logging.getLogger("aiconfigurator_core").setLevel(logging.ERROR)
    return argparse.Namespace(
        common=common,
        utils=utils,
        get_backend=get_backend,
        ModelConfig=ModelConfig,
        RuntimeConfig=RuntimeConfig,
        build_model_config=build_model_config,
        check_is_moe=check_is_moe,
        get_model=get_model,
        resolve_context_fmha_by_data=resolve_context_fmha_by_data,
        resolve_nvfp4_for_system=resolve_nvfp4_for_system,
        get_database=get_database,
        version=version("aiconfigurator-core"),
    )


@dataclass(frozen=True)
class Query:
    """One aiconfigurator setup: everything but the batch."""

    system: str
    backend: str
    model: str
    tp: int
    gemm: str | None
    kv: str
    isl: int
    osl: int


def query_of(row: dict) -> Query | str:
    """The row as aiconfigurator's inputs, or why it cannot answer it."""
    if row["gpu"] not in SYSTEMS:
        return f"GPU {row['gpu']} not in aiconfigurator"
    if row["model_preset"] not in MODELS:
        return f"model {row['model_preset']} not in aiconfigurator's configs"
    published = str(row["engine"]).lower()
    if "rocm" in published or "lmdeploy" in published:
        return f"engine {row['engine']} not in aiconfigurator"
    model = MODELS[row["model_preset"]]
    if "R1" in str(row["model_as_published"]):
        model = "deepseek-ai/DeepSeek-R1"
    fmt = cal._format_of(row["weights_format"])
    block_fp8 = fmt == "fp8" and ("block" in str(row["weights_format"]) or model.startswith("deepseek"))
    if block_fp8 and model == "Qwen/Qwen3-32B":
        model = "Qwen/Qwen3-32B-FP8"
    gemm = None if block_fp8 else {"fp8": "fp8", "nvfp4": "nvfp4"}.get(fmt, "bfloat16")
    kv = "fp8" if cal._format_of(row["kv_format"]) == "fp8" else "bfloat16"
    return Query(
        SYSTEMS[row["gpu"]],
        cal.engine_of(row["engine"]),
        model,
        int(row["tensor_parallel"]),
        gemm,
        kv,
        int(row["input_tokens"]),
        int(row["output_tokens"]),
    )


class Aic:
    """aiconfigurator_core's agg estimate, cached per setup and batch."""

    def __init__(self, sdk=None):
        self.sdk = sdk or load_sdk()
        self._tmp = tempfile.TemporaryDirectory(prefix="aic-configs-")  # removed with the instance
        self.config_dir = Path(self._tmp.name)

    @lru_cache(maxsize=64)  # noqa: B019 (one instance per run)
    def database(self, system: str, backend: str):
        return self.sdk.get_database(system, backend, "current")

    def model_path(self, hf_id: str) -> str:
        """A bundled config that its model list leaves out (Mixtral) is read from a folder holding a copy."""
        if hf_id in self.sdk.common.DefaultHFModels:
            return hf_id
        bundled = Path(self.sdk.utils._get_model_config_path()) / f"{hf_id.replace('/', '--')}_config.json"
        folder = self.config_dir / hf_id.replace("/", "--")
        folder.mkdir(exist_ok=True)
        shutil.copy(bundled, folder / "config.json")
        return str(folder)

    @lru_cache(maxsize=64)  # noqa: B019
    def model(self, q: Query):
        sdk, path = self.sdk, self.model_path(q.model)
        moe_tp, moe_ep = q.tp, 1
        if sdk.check_is_moe(path):
            moe_tp, moe_ep = sdk.ModelConfig(tp_size=q.tp, moe_tp_size=q.tp, moe_ep_size=1).resolve_moe_parallelism()
        mc = sdk.build_model_config(q.tp, 1, 1, moe_tp, moe_ep, gemm_quant_mode=q.gemm, kvcache_quant_mode=q.kv)
        db = self.database(q.system, q.backend)
        sdk.resolve_context_fmha_by_data(mc, path, db, q.backend, is_context_role=True)
        sdk.resolve_nvfp4_for_system(mc, q.system, path, backend_name=q.backend)
        return sdk.get_model(path, mc, q.backend), db

    @lru_cache(maxsize=8192)  # noqa: B019
    def estimate(self, q: Query, batch: int) -> dict:
        """TTFT and TPOT (ms), output tokens/s of the replica, and whether weights or KV cache overflow."""
        model, db = self.model(q)
        rc = self.sdk.RuntimeConfig(isl=q.isl, osl=q.osl, batch_size=batch)
        s = self.sdk.get_backend(q.backend).run_agg(model, db, rc, ctx_tokens=q.isl)
        r = s.get_result_dict()
        return {
            "ttft_ms": r["ttft"],
            "tpot_ms": r["tpot"],
            "tokens_s": r["tokens/s"],
            "oom": s.check_oom(),
            "kv_oom": s.check_kv_cache_oom(),
            "version": f"{db.backend} {db.version}",
        }

    def run(self, row: dict) -> dict | str:
        """aiconfigurator's answer for the row's run (its load as a batch, module docstring), or why none."""
        q = query_of(row)
        if isinstance(q, str):
            return q
        try:
            return self._run(q, row)
        except Exception as e:  # the package raises its own errors for data it lacks
            return f"aiconfigurator: {type(e).__name__}: {str(e).splitlines()[0][:90]}"

    def _run(self, q: Query, row: dict) -> dict | str:
        load = float(row["load"])
        if math.isinf(load) or row.get("arrival") == "all_at_once":
            cap = min(512, int(row["requests"])) if not cal._blank(row.get("requests")) else 512
            fits = [b for b in BATCH_GRID if b <= cap and not self._full(q, b)]
            if not fits:
                return "aiconfigurator: out of memory (weights or KV cache) at batch 1"
            return {**self.estimate(q, max(fits)), "ttft_ms": None, "batch": max(fits), "load": "burst"}
        if row["load_kind"] == "concurrency":
            est = self.estimate(q, int(load))
            return (
                "aiconfigurator: out of memory at the clients' batch"
                if est["oom"]
                else {**est, "batch": int(load), "load": "closed loop"}
            )
        for b in BATCH_GRID:
            if self._full(q, b):
                break
            est = self.estimate(q, b)
            if b >= load * (est["ttft_ms"] + est["tpot_ms"] * (q.osl - 1)) / 1e3:
                return {**est, "batch": b, "load": "request rate"}
        return "aiconfigurator: request rate above its capacity"

    def _full(self, q: Query, batch: int) -> bool:
        est = self.estimate(q, batch)
        return est["oom"] or est["kv_oom"]

    def answer(self, row: dict) -> dict | str:
        """aiconfigurator's figure for the row (its metric, statistic and unit) and how it got it, or why none."""
        est = self.run(row)
        if isinstance(est, str):
            return est
        value = aic_value(row, est)
        if value is None:
            return "aiconfigurator: no such figure (a p99, or a burst's first token)"
        return {
            "predicted": value,
            "batch": est["batch"],
            "load": est["load"],
            "database": est["version"],
            "kv_full": bool(est["kv_oom"]),
        }


def aic_value(row: dict, est: dict) -> float | None:
    """aiconfigurator's figure for the row's metric and statistic, in the row's unit."""
    if row["metric"] != "output_tokens_per_s" and str(row["statistic"]).lower() not in MEAN_STATS:
        return None
    value = est.get(METRICS[row["metric"]])
    if value is None or row["metric"] == "output_tokens_per_s":
        return value
    return value / 1e3 if row["unit"] == "s" else value
