"""Extract the measured kernel times gpuplan_core/perf/kernels.py reads (data/kernel_times/) from an unpacked
aiconfigurator-core 0.12.0 wheel (Apache-2.0; NVIDIA's perf database, systems/data/<gpu>/<op>/<engine>/<version>/):
dense GEMMs (BF16 and per-tensor FP8) on a power-of-two grid of tokens, prefill and decode attention with
128-wide heads and no sliding window, NCCL all-reduce, the routed experts of a mixture-of-experts layer (``moe``: the
catalog's MoE shapes, balanced routing, tensor-parallel experts) and multi-head latent attention (``mla``: DeepSeek's
prefill and decode attention, SGLang and TensorRT-LLM); H100-SXM, H200 and B200 with vLLM, SGLang and TensorRT-LLM at
the versions the package calls current. Latencies are milliseconds, as stored.

    pip download aiconfigurator-core==0.12.0 --no-deps -d /tmp/aic && unzip -q /tmp/aic/*.whl -d /tmp/aic/x
    python bench/extract_kernel_times.py /tmp/aic/x/aiconfigurator_core/systems/data
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

OUT = Path(__file__).resolve().parents[1] / "data" / "kernel_times"
GPUS = {"h100_sxm": "H100-SXM", "h200_sxm": "H200", "b200_sxm": "B200"}
ENGINES = {"vllm": "0.24.0", "sglang": "0.5.14", "trtllm": "1.3.0rc20"}
DTYPES = {"bfloat16": "bf16", "fp8": "fp8"}
M = [2**i for i in range(15)]  # 1 .. 16,384 tokens
HEADS = [4, 5, 8, 10, 16, 20, 32, 40, 64]  # query heads per GPU of the catalog's 128-wide-head models at TP 1-8
KV_HEADS = [1, 2, 4, 8]
NK = [128, 256, 512, 1024, 1536, 2048, 2560, 3072, 3584, 4096, 5120, 6144, 7168, 8192, 10240, 12288, 16384]
NK += [51200, 65536]


def gemm(root: Path) -> pd.DataFrame:
    parts = []
    for g, gpu in GPUS.items():
        for e, v in ENGINES.items():
            d = pd.read_parquet(root / g / "gemm" / e / v / "gemm_perf.parquet")
            d = d[d["gemm_dtype"].isin(DTYPES) & d["m"].isin(M) & d["n"].isin(NK) & d["k"].isin(NK)]
            d = d.groupby(["gemm_dtype", "m", "n", "k"], as_index=False)["latency"].min()  # the kernel the engine picks
            parts.append(d.assign(gpu=gpu, engine=e, version=v, dtype=d["gemm_dtype"].map(DTYPES)))
    out = pd.concat(parts)
    return out[["gpu", "engine", "version", "dtype", "m", "n", "k", "latency"]].rename(columns={"latency": "ms"})


def attention(root: Path, phase: str) -> pd.DataFrame:
    parts = []
    for g, gpu in GPUS.items():
        for e, v in ENGINES.items():
            d = pd.read_parquet(root / g / "attention" / e / v / f"{phase}_attention_perf.parquet")
            d = d[(d["head_dim"] == 128) & (d["window_size"] == 0) & (d["beam_width"] == 1)]
            d = d[d["num_heads"].isin(HEADS) & d["num_key_value_heads"].isin(KV_HEADS)]
            length = "step" if phase == "generation" else "isl"
            keys = ["kv_cache_dtype", "batch_size", length, "num_heads", "num_key_value_heads"]
            d = d.groupby(keys, as_index=False)["latency"].min()
            d = d.rename(columns={length: "past_tokens" if phase == "generation" else "prompt_tokens"})
            kv_dtype = d["kv_cache_dtype"].replace({"bfloat16": "bf16"})
            parts.append(d.assign(gpu=gpu, engine=e, version=v, kv_dtype=kv_dtype))
    out = pd.concat(parts).drop(columns="kv_cache_dtype").rename(columns={"latency": "ms", "batch_size": "batch"})
    first = ["gpu", "engine", "version", "kv_dtype"]
    return out[first + [c for c in out.columns if c not in first]]


# (hidden, expert intermediate, top-k, experts) of the catalog's MoE presets: DeepSeek-V3/R1, Mixtral-8x7B
MOE_SHAPES = {(7168, 2048, 8, 256), (4096, 14336, 2, 8)}
MOE_DTYPES = {"bfloat16": "bf16", "fp8": "fp8", "fp8_block": "fp8_block"}


def moe(root: Path) -> pd.DataFrame:
    parts = []
    for g, gpu in GPUS.items():
        for e, v in ENGINES.items():
            d = pd.read_parquet(root / g / "moe" / e / v / "moe_perf.parquet")
            shape = list(zip(d["hidden_size"], d["inter_size"], d["topk"], d["num_experts"], strict=True))
            d = d[pd.Series([s in MOE_SHAPES for s in shape], index=d.index)]
            d = d[(d["distribution"] == "balanced") & (d["moe_ep_size"] == 1) & d["moe_dtype"].isin(MOE_DTYPES)]
            keys = ["moe_dtype", "hidden_size", "inter_size", "topk", "num_experts", "moe_tp_size", "num_tokens"]
            d = d.groupby(keys, as_index=False)["latency"].min()  # the kernel the engine picks
            parts.append(d.assign(gpu=gpu, engine=e, version=v, dtype=d["moe_dtype"].map(MOE_DTYPES)))
    out = pd.concat(parts).drop(columns="moe_dtype").rename(columns={"latency": "ms", "num_tokens": "tokens"})
    first = ["gpu", "engine", "version", "dtype"]
    return out[first + [c for c in out.columns if c not in first + ["ms"]] + ["ms"]]


def mla(root: Path, phase: str) -> pd.DataFrame:
    parts = []
    for g, gpu in GPUS.items():
        for e, v in ENGINES.items():
            f = root / g / "mla" / e / v / f"{phase}_mla_perf.parquet"
            if not f.exists():  # vLLM's tables time the whole attention module, not the kernel
                continue
            d = pd.read_parquet(f)
            length = "step" if phase == "generation" else "isl"
            keys = ["kv_cache_dtype", "num_heads", "batch_size", length]
            d = d.groupby(keys, as_index=False)["latency"].min()
            d = d.rename(columns={length: "past_tokens" if phase == "generation" else "prompt_tokens"})
            kv_dtype = d["kv_cache_dtype"].replace({"bfloat16": "bf16"})
            parts.append(d.assign(gpu=gpu, engine=e, version=v, kv_dtype=kv_dtype))
    out = pd.concat(parts).drop(columns="kv_cache_dtype").rename(columns={"latency": "ms", "batch_size": "batch"})
    first = ["gpu", "engine", "version", "kv_dtype"]
    return out[first + [c for c in out.columns if c not in first]]


def all_reduce(root: Path) -> pd.DataFrame:
    parts = []
    for g, gpu in GPUS.items():
        versions = sorted((root / g / "comm" / "nccl").iterdir())
        d = pd.read_parquet(versions[-1] / "nccl_perf.parquet")
        d = d[(d["op_name"] == "all_reduce") & (d["nccl_dtype"] == "half")]
        parts.append(d.assign(gpu=gpu, library="nccl", version=versions[-1].name))
    out = pd.concat(parts).rename(columns={"latency": "ms", "message_size": "message_elements"})
    return out[["gpu", "library", "version", "num_gpus", "message_elements", "ms"]]


def main() -> None:
    root = Path(sys.argv[1])
    OUT.mkdir(exist_ok=True)
    for name, frame in {
        "gemm": gemm(root),
        "attention_prefill": attention(root, "context"),
        "attention_decode": attention(root, "generation"),
        "all_reduce": all_reduce(root),
        "moe": moe(root),
        "mla_prefill": mla(root, "context"),
        "mla_decode": mla(root, "generation"),
    }.items():
        frame.to_csv(
            OUT / f"{name}.csv.gz", index=False, float_format="%.5g", compression={"method": "gzip", "mtime": 0}
        )
        print(f"{name}: {len(frame):,} rows, {(OUT / f'{name}.csv.gz').stat().st_size / 1e3:,.0f} kB")


if __name__ == "__main__":
    main()
