"""The training step model against published runs (data/training_speed_measurements.csv): each run as its
publisher laid it out, predicted tokens per second per GPU against the measured, a third of each publisher's runs
held out (by CRC-32 of the run's id), the error per regime.

bench/fit_training.py fits TrainingEfficiency on the other two thirds and writes data/training_calibration.json;
tests hold that the held-out error stays within what README states.
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
from ..hardware.catalog import get_gpu
from ..model.arch import ModelArch
from ..model.hf_config import model_from_hf_config
from ..model.presets import get_preset
from .training_step import StepLayout, TrainingEfficiency, training_step

MEASUREMENTS_FILE = "training_speed_measurements.csv"
MODELS_FILE = "training_speed_models.json"
PACKED_FILE = "training_packed_samples.json"
SHARDING_ZERO = {
    "ddp": 0,
    "zero1": 1,
    "distributed_optimizer": 1,
    "zero2": 2,
    "zero3": 3,
    "fsdp": 3,
    "fsdp2": 3,
    "hsdp": 3,
}
# the network per GPU between machines where the run's publisher states it or its cluster's spec does
GBIT_PER_GPU = {"Ampere": 200.0, "Hopper": 400.0, "Blackwell": 400.0}


@lru_cache(maxsize=1)
def measured_runs() -> pd.DataFrame:
    return pd.read_csv(DATA_DIR / MEASUREMENTS_FILE)


@cache
def run_model(key: str) -> ModelArch:
    """A run's model: a bundled preset or a config of data/training_speed_models.json."""
    configs = json.loads((DATA_DIR / MODELS_FILE).read_text())["models"]
    if key in configs:
        cfg = {k: v for k, v in configs[key].items() if k != "source"}
        return model_from_hf_config(cfg, name=key)
    return get_preset(key)


def source_key(source: str) -> str:
    """The repository or paper of a ``source`` cell: 'pytorch/torchtitan benchmarks/x.md @sha, ...' ->
    'pytorch/torchtitan' (torchtitan's three benchmark files are one source; NeMo and Megatron-Bridge two)."""
    return str(source).replace(",", " ").split()[0]


@cache
def _packed_datasets() -> dict[str, int]:
    raw = json.loads((DATA_DIR / PACKED_FILE).read_text())["datasets"]
    return {name: int(v["mean_example_tokens"]) for name, v in raw.items()}


def packed_example_tokens(notes: str) -> int | None:
    """A run that packs a dataset's examples into each sequence ('SQuAD v1.1 packed to 4096 tokens' in its notes):
    the dataset's mean example length (data/training_packed_samples.json); None for unpacked runs."""
    for name, tokens in _packed_datasets().items():
        if f"{name} packed to" in notes:
            return tokens
    return None


def held_out(run_id: str) -> bool:
    """A third of the runs, fixed by the id's CRC-32 (so a new row does not move the others)."""
    return zlib.crc32(run_id.encode()) % 3 == 0


def _num(x, default):
    return default if x is None or (isinstance(x, float) and math.isnan(x)) else x


def kernel_stack(framework: str) -> str:
    """A run's kernel stack (StepLayout.kernels): 'megatron' for Megatron-Core (NeMo, Megatron-Bridge: Transformer
    Engine's fused attention, norms and casts), 'pytorch' for PyTorch FSDP frameworks (llm-foundry, torchtitan)."""
    return "megatron" if "Megatron-Core" in framework else "pytorch"


def tp_overlapped(framework: str, notes: str) -> bool:
    """Whether a run overlaps its tensor-parallel collectives with the GEMMs: Megatron-Core's performance recipes do
    (NVIDIA/NeMo nemo/collections/llm/recipes/llama3_70b.py @0189a3b pretrain_recipe_performance:
    MegatronCommOverlapCallback(tp_comm_overlap=True); Megatron-Bridge's CommOverlapConfig(tp_comm_overlap=True)),
    torchtitan where its notes say async TP."""
    return kernel_stack(framework) == "megatron" or "async tp" in notes.lower().replace("asynctp", "async tp")


def run_layout(row) -> tuple[ModelArch, object, StepLayout]:
    """The run as its publisher laid it out."""
    m, gpu = run_model(row.model), get_gpu(row.gpu)
    tp, pp, cp = (int(_num(getattr(row, k), 1)) for k in ("tp", "pp", "cp"))
    seq, micro = int(row.seq_len), int(_num(row.micro_batch, 1))
    dp = max(1, int(row.gpu_count) // (tp * pp * cp))
    glob = _num(row.global_batch, micro * dp * _num(row.grad_accum, 1))
    rec = str(_num(row.recompute, "none"))
    every = 1
    if rec.startswith("every_k:"):
        rec, every = "full", int(rec.split(":")[1])
    notes = str(_num(row.notes, ""))
    nvl72 = "GB200" in notes or "GB200" in str(_num(row.interconnect, ""))
    prec = {"bf16": "mixed"}.get(str(row.precision), str(row.precision))
    lay = StepLayout(
        gpus=int(row.gpu_count),
        tp=tp,
        pp=pp,
        cp=cp,
        zero_stage=SHARDING_ZERO.get(str(row.sharding), 1),
        micro_batch=micro,
        seq_len=seq,
        global_batch_tokens=float(glob) * seq,
        precision=prec,
        frozen_base="LoRA" in notes,
        recompute=rec,
        recompute_every=every,
        virtual_stages=int(_num(row.vp, 1)),
        ep=int(_num(row.ep, 1)),
        gpus_per_node=72 if nvl72 else 8,
        inter_node_gbit_s_per_gpu=GBIT_PER_GPU.get(gpu.architecture, 400.0),
        packed_example_tokens=packed_example_tokens(notes),
        kernels=kernel_stack(str(getattr(row, "framework", ""))),
        tp_comm_overlap=tp_overlapped(str(getattr(row, "framework", "")), notes),
    )
    return m, gpu, lay


def regime_of(row, m: ModelArch) -> str:
    if m.is_moe:
        return "mixture of experts"
    if "LoRA" in str(_num(row.notes, "")) or "SFT" in str(_num(row.notes, "")):
        return "fine-tuning"
    return "pre-training, FP8" if row.precision != "bf16" else "pre-training, BF16"


@dataclass
class RunError:
    run_id: str
    publisher: str
    regime: str
    held_out: bool
    measured: float
    predicted: float
    source: str = ""  # the repository or paper (source_key)
    architecture: str = ""  # the GPU's generation (Ampere, Hopper, Blackwell)
    kernels: str = ""  # the run's kernel stack (StepLayout.kernels)
    tp_overlapped: bool = False  # tensor parallel with its collectives overlapped (StepLayout.tp_comm_overlap)

    @property
    def error(self) -> float:
        return self.predicted / self.measured - 1


def run_errors(eff: TrainingEfficiency, mfu: float | None = None) -> list[RunError]:
    """Every run with a measured tokens/s per GPU: predicted (or, with ``mfu``, at that fixed MFU) vs measured."""
    out = []
    for row in measured_runs().itertuples():
        if pd.isna(row.tokens_per_s_per_gpu):
            continue
        m, gpu, lay = run_layout(row)
        step = training_step(m, gpu, lay, eff)
        pred = step.tokens_per_s_per_gpu
        if mfu is not None:  # the same run at a fixed MFU: tokens/s = MFU x peak / FLOPs per token
            pred = pred * mfu / step.mfu
        reg, src = regime_of(row, m), source_key(row.source)
        measured = float(row.tokens_per_s_per_gpu)
        out.append(
            RunError(
                run_id=row.id,
                publisher=row.publisher,
                regime=reg,
                held_out=held_out(row.id),
                measured=measured,
                predicted=pred,
                source=src,
                architecture=gpu.architecture,
                kernels=lay.kernels,
                tp_overlapped=lay.tp > 1 and lay.tp_comm_overlap,
            )
        )
    return out


def error_summary(errors: list[RunError], held: bool = True) -> dict[str, dict]:
    """Per regime (and 'all dense'): points, median |error|, share within 15%, 80th percentile |error|."""
    groups: dict[str, list[float]] = {}
    for e in errors:
        if e.held_out != held:
            continue
        groups.setdefault(e.regime, []).append(abs(e.error))
        if e.regime != "mixture of experts":
            groups.setdefault("all dense", []).append(abs(e.error))
    return {k: error_stats(v, within=(0.15,), p80=True) for k, v in sorted(groups.items())}


def stored_calibration() -> dict:
    """data/training_calibration.json: the fitted constants and the held-out error per regime (read once)."""
    return _stored()


@lru_cache(maxsize=1)
def _stored() -> dict:
    from .training_step import CALIBRATION_FILE

    return json.loads((DATA_DIR / CALIBRATION_FILE).read_text())
