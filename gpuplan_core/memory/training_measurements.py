"""The training memory budget against published measured peaks (data/training_memory_measurements.csv: torchtune,
litgpt / lit-gpt, torchtitan, torchao): each run as its recipe set it up, the budget per GPU against the peak.

No constant of the memory budget is fitted on these rows: every term comes from the frameworks' code and the
architecture, so the error on all rows is an out-of-sample error. Rows the data's notes mark SUSPECT (below what
the optimizer alone must hold) are left out. PyTorch's max_memory_allocated / active counters exclude the CUDA
context, so for those rows the budget's context is left out too.
"""

from __future__ import annotations

import json
import math
import zlib
from dataclasses import dataclass
from functools import cache, lru_cache

import pandas as pd

from ..common.data import DATA_DIR
from ..common.stats import error_stats
from ..common.units import GiB
from ..model.arch import ModelArch
from ..model.hf_config import model_from_hf_config
from ..model.presets import get_preset
from .budget import memory_budget
from .components import Assumptions, MemoryRequest

MEASUREMENTS_FILE = "training_memory_measurements.csv"
MODELS_FILE = "training_models.json"
TARGETS = {
    "attention_qv": "qv",
    "attention_qkv": "attention",
    "attention": "attention",
    "all-linear": "all-linear",
    "attention_qvo+mlp": "all-linear",
}
# Unpacked Alpaca batches are padded to their longest sample: the peak step's length is the longest sample the
# truncation allows. lit-gpt's resource tables report that length for Alpaca with the Llama 2 tokenizer: 1,304.
ALPACA_LONGEST_TOKENS = 1304
OPTIMIZERS = {
    "adamw": "adamw",
    "paged_adamw": "adamw",
    "adamw8bit": "adam8bit",
    "paged_adamw8bit": "adam8bit",
    "adamw4bit": "adam8bit",
}


@lru_cache(maxsize=1)
def measured_peaks() -> pd.DataFrame:
    d = pd.read_csv(DATA_DIR / MEASUREMENTS_FILE)
    return d[~d.notes.fillna("").str.contains("SUSPECT")]


@cache
def peak_model(key: str) -> ModelArch:
    configs = json.loads((DATA_DIR / MODELS_FILE).read_text())["models"]
    if key in configs:
        return model_from_hf_config({k: v for k, v in configs[key].items() if k != "source"}, name=key)
    return get_preset(key)


def _get(row, name, default):
    v = getattr(row, name)
    return default if v is None or (isinstance(v, float) and math.isnan(v)) else v


def peak_request(row) -> MemoryRequest:
    """The run as its recipe set it up."""
    method = str(row.method)
    fp8 = str(_get(row, "linear_fp8", "none"))
    precision = "mixed" if bool(row.master_weights_fp32) else "bf16"
    if fp8.startswith("float8"):
        precision = "fp8"
    elif fp8 in ("mxfp8", "nvfp4"):
        precision = fp8
    targets = TARGETS.get(str(_get(row, "lora_targets", "all-linear")), "all-linear")
    if bool(_get(row, "lora_lm_head", False)) and targets == "all-linear":
        targets = "all-linear+head"
    rec = str(_get(row, "recompute", "none"))
    rec = {"selective_op": "selective"}.get(rec, rec)
    tp, pp, cp = (int(_get(row, k, 1)) for k in ("tp", "pp", "cp"))
    micro = int(_get(row, "micro_batch", 1))
    seq = int(_get(row, "seq_len", 2048))
    if not bool(_get(row, "packed", True)) and "Alpaca" in str(_get(row, "notes", "")):
        seq = min(seq, ALPACA_LONGEST_TOKENS)
    if pp > 1 and str(row.framework) == "torchtitan":  # the local batch, split in pipeline micro-batches of 1
        micro = 1  # (torchtitan's pipeline_parallel_microbatch_size default)
    zero = 3 if str(row.sharding).startswith("fsdp") else 0
    offload = {"optimizer": "optimizer", "params": "optimizer+params" if zero == 3 else "optimizer"}.get(
        str(_get(row, "cpu_offload", "none")), "none"
    )
    return MemoryRequest(
        mode="finetune" if method in ("lora", "qlora") else "training",
        method=method,
        precision=precision,
        optimizer=OPTIMIZERS.get(str(row.optimizer), "adamw"),
        context_tokens=seq,
        batch=micro,
        gpus=int(row.gpu_count),
        tp=tp,
        pp=pp,
        cp=cp,
        zero_stage=zero,
        offload=offload,
        recompute=rec,
        cross_entropy="full" if str(_get(row, "cross_entropy", "full")) == "full" else "chunked",
        lora_rank=int(_get(row, "lora_rank", 16)),
        lora_targets=targets,
        lora_dropout=float(_get(row, "lora_dropout", 0.0)),
        qlora_library="torchao" if str(_get(row, "qlora_library", "")) == "torchao" else "bitsandbytes",  # litgpt
    )


def held_out(run_id: str) -> bool:
    """A third of the runs, fixed by the id's CRC-32 (the rule the serving and training-speed fits use)."""
    return zlib.crc32(run_id.encode()) % 3 == 0


def bnb_qlora_errors(asm: Assumptions) -> list[tuple[float, bool]]:
    """(predicted / measured - 1, held out) of every bitsandbytes QLoRA run, under these assumptions (the fit of
    Assumptions.qlora_bnb_overhead_bytes_per_param, bench/fit_training_memory.py)."""
    out = []
    for row in measured_peaks().itertuples():
        if row.method != "qlora" or str(row.qlora_library) != "bitsandbytes":
            continue
        req = peak_request(row).model_copy(update={"assumptions": asm})
        b = memory_budget(peak_model(row.model), req)
        pred = b.per_gpu_bytes - (
            b.components.get("CUDA context", 0.0) if str(row.memory_kind) in ("allocated", "active") else 0.0
        )
        out.append((pred / _measured_bytes(row) - 1, held_out(row.id)))
    return out


def _measured_bytes(row) -> float:
    return float(row.measured) * (GiB if row.unit == "GiB" else 1e9)


def regime_of(row) -> str:
    if str(row.method) in ("lora", "qlora"):
        return "QLoRA" if row.method == "qlora" else "LoRA"
    if str(_get(row, "linear_fp8", "none")) != "none":
        return "pre-training, FP8 / MXFP8"
    return "pre-training (FSDP)" if str(row.sharding).startswith("fsdp") else "full fine-tuning"


@dataclass
class PeakError:
    run_id: str
    regime: str
    measured_bytes: float
    predicted_bytes: float
    paged: bool

    @property
    def error(self) -> float:
        return self.predicted_bytes / self.measured_bytes - 1


def peak_errors() -> list[PeakError]:
    out = []
    for row in measured_peaks().itertuples():
        req = peak_request(row)
        b = memory_budget(peak_model(row.model), req)
        pred = b.per_gpu_bytes
        if str(row.memory_kind) in ("allocated", "active"):
            pred -= b.components.get("CUDA context", 0.0)
        measured = _measured_bytes(row)
        paged = "paged" in str(row.optimizer) and row.method == "full"  # adapters' states are too small to page
        out.append(PeakError(row.id, regime_of(row), measured, pred, paged))
    return out


def peak_summary(errors: list[PeakError] | None = None) -> dict[str, dict]:
    """Per regime (and 'all'): points, median |error|, shares within 10% and 20%; paged optimizers apart (their
    states leave the GPU under pressure, so a peak below the budget is expected)."""
    groups: dict[str, list[float]] = {}
    for e in errors if errors is not None else peak_errors():
        key = "paged optimizers (full fine-tuning)" if e.paged else e.regime
        groups.setdefault(key, []).append(abs(e.error))
        if not e.paged:
            groups.setdefault("all (not paged)", []).append(abs(e.error))
    return {k: error_stats(v, within=(0.10, 0.20)) for k, v in sorted(groups.items())}
