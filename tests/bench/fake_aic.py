"""A tiny fake of aiconfigurator_core's estimator (the entry points bench/aic_estimator.py calls), and a published
serving row to vary: for the bench tests' hand numbers."""

from __future__ import annotations

from types import SimpleNamespace

from bench import aic_estimator

KV_FITS = 32  # the fake's KV cache holds at most 32 sequences
WEIGHTS_FIT = 64  # and its memory 64


class FakeSummary:
    """A fake agg estimate: TTFT 10 ms + 1 ms a sequence, TPOT 5 ms, tokens/s batch x 1000 / TPOT."""

    def __init__(self, batch: int):
        self.batch = batch

    def get_result_dict(self) -> dict:
        return {"ttft": 10.0 + self.batch, "tpot": 5.0, "tokens/s": self.batch * 1000 / 5.0}

    def check_oom(self) -> bool:
        return self.batch > WEIGHTS_FIT

    def check_kv_cache_oom(self) -> bool:
        return self.batch > KV_FITS


def fake_sdk(calls: list) -> SimpleNamespace:
    def run_agg(model, db, rc, ctx_tokens):  # noqa: ARG001
        calls.append((model.path, model.mc, rc.isl, rc.osl, rc.batch_size, ctx_tokens))
        return FakeSummary(rc.batch_size)

    return SimpleNamespace(
        common=SimpleNamespace(DefaultHFModels=set(aic_estimator.MODELS.values()) | {"deepseek-ai/DeepSeek-R1"}),
        utils=None,
        get_database=lambda system, backend, version: SimpleNamespace(backend=backend, version="9.9"),
        check_is_moe=lambda path: "Mixtral" in path or "deepseek" in path,
        ModelConfig=lambda **kw: SimpleNamespace(resolve_moe_parallelism=lambda: (kw["moe_tp_size"], 1)),
        build_model_config=lambda tp, pp, dp, moe_tp, moe_ep, **kw: (
            tp,
            moe_tp,
            moe_ep,
            kw["gemm_quant_mode"],
            kw["kvcache_quant_mode"],
        ),
        resolve_context_fmha_by_data=lambda *a, **kw: None,
        resolve_nvfp4_for_system=lambda *a, **kw: None,
        get_model=lambda path, mc, backend: SimpleNamespace(path=path, mc=mc),
        RuntimeConfig=lambda isl, osl, batch_size: SimpleNamespace(isl=isl, osl=osl, batch_size=batch_size),
        get_backend=lambda name: SimpleNamespace(run_agg=run_agg),
        version="0.0 (fake)",
    )


def row(**kw) -> dict:
    base = dict(
        id="src-001",
        gpu="H100-SXM",
        model_preset="Llama-3.1-8B",
        model_as_published="Llama 3.1 8B",
        engine="vLLM",
        weights_format="bf16",
        kv_format="bf16 (not stated)",
        tensor_parallel=1,
        input_tokens=1000,
        output_tokens=101,
        load_kind="concurrency",
        load=4.0,
        arrival="closed",
        requests=100.0,
        metric="itl",
        statistic="mean",
        unit="ms",
        measured=20.0,
    )
    return {**base, **kw}
