"""How a published serving run (a row of data/serving_measurements.csv) maps onto a scenario: the engine profile
and release line it ran as, its formats, how its client sent load, and the limits its server was started with
(the flags its ``setup`` names). serving_calibration.py simulates each run from these."""

from __future__ import annotations

import math
import re


def engine_of(published: str) -> str:
    """The engine profile a published engine name runs as: TensorRT-LLM and NIM (TensorRT-LLM inside), SGLang,
    vLLM; LMDeploy's TurboMind batches whole prompts without eviction, as TensorRT-LLM does."""
    text = str(published).lower()
    if text.startswith(("tensorrt", "nvidia nim", "nim", "lmdeploy")):
        return "trtllm"
    if text.startswith("sglang"):
        return "sglang"
    return "vllm"


def version_of(row: dict) -> str | None:
    """The engine release line a published run ran as (hardware/engines.py RELEASES), from its engine and
    ``engine_version``; None (the engine's latest) where no line covers it or the engine only runs as another's
    (NIM, LMDeploy)."""
    from ..hardware.engines import release_of

    published = str(row["engine"]).lower()
    if not published.startswith(("vllm", "sglang", "tensorrt")):
        return None
    return release_of(engine_of(published), str(row.get("engine_version") or ""), "pytorch" in published)


def policy_of(row: dict) -> str | None:
    """The scheduling policy a published run's engine ran by where its engine profile's is not it (schedulers.py):
    LMDeploy's TurboMind ('turbomind'), simulated on TensorRT-LLM's profile otherwise; None: the profile's."""
    return "turbomind" if str(row["engine"]).lower().startswith("lmdeploy") else None


def max_model_len_of(row: dict) -> int | None:
    """The context the run's server was started with (``--max-model-len N`` in its setup; None: not stated, the
    model's own context, as the engine defaults to): a release line's scheduling can depend on it (vLLM 0.6 chunks
    prompts only over 32K)."""
    hit = re.search(r"--max-model-len[ =](\d+)", str(row.get("setup") or ""))
    return int(hit.group(1)) if hit else None


def _format_of(text: str) -> str:
    """A published format ('fp8 (native checkpoint)', 'not stated') as a format name; unstated: bf16."""
    word = str(text).split()[0].lower()
    return word if word in ("bf16", "fp16", "fp8", "nvfp4", "fp32", "int8") else "bf16"


def _blank(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v)) or str(v).strip().lower() in ("", "nan", "none")


def shape_of(row: dict) -> tuple[str, str, float, int | None]:
    """How a published run sent its load: (arrival, lengths, spread, requests). Lengths from a dataset (ShareGPT,
    sonnet) or not stated are long-tailed ('chat'); a stated spread is uniform; else fixed."""
    arrival = str(row.get("arrival") or "").strip()
    if arrival not in ("poisson", "gamma", "closed", "all_at_once"):
        arrival = "closed" if row["load_kind"] == "concurrency" else "poisson"
    spread, dataset = row.get("length_spread"), row.get("length_dataset")
    if not _blank(spread) and float(spread) > 0:
        lengths, spread = "uniform", float(spread)
    elif not _blank(dataset) and str(dataset).strip() != "not_stated":
        lengths, spread = "chat", 0.0
    else:
        lengths, spread = "fixed", 0.0
    n = row.get("requests")
    return ("bursty" if arrival == "gamma" else arrival), lengths, spread, None if _blank(n) else int(n)


# The server flags a run's setup may name, per limit: vLLM, TensorRT-LLM (trtllm-serve / LLM API), SGLang.
SERVER_FLAGS = {
    "max_num_seqs": ("--max-num-seqs", "--max_batch_size", "--max-running-requests"),
    "max_num_batched_tokens": ("--max-num-batched-tokens", "--max_num_tokens", "--chunked-prefill-size"),
}


def server_limits_of(row: dict) -> tuple[tuple[str, int], ...]:
    """The scheduler limits the run's server was started with, where its ``setup`` names them after ``server:``
    (the client's flags before it are not the server's): sequences at once (vLLM ``--max-num-seqs``,
    TensorRT-LLM ``--max_batch_size``, SGLang ``--max-running-requests``), the step's token budget
    (``--max-num-batched-tokens``, ``--max_num_tokens``, ``--chunked-prefill-size``) and vLLM's
    ``--enable-chunked-prefill=False`` (``("chunked_prefill", 0)``: whole prompts first, as the release line
    schedules them unchunked). Empty where it names none: the engine's defaults, as the server had; empty too
    where the server ran vLLM's multi-step scheduling (``--num-scheduler-steps`` over 1: prompts admitted only
    every N steps, tokens streamed N at a time), which the step loop does not simulate, so its other limits
    would configure a scheduler it did not run (dstack's ROCm vLLM 0.6 405B runs keep V0's defaults)."""
    text = str(row.get("setup") or "")
    at = text.find("server:")
    if at < 0:
        return ()
    text = text[at:]
    multi = re.search(r"--num-scheduler-steps?[ =](\d+)", text)
    if multi and int(multi.group(1)) > 1:
        return ()
    out = []
    for key, flags in SERVER_FLAGS.items():
        for flag in flags:
            hit = re.search(re.escape(flag) + r"[ =](\d+)", text)
            if hit:
                out.append((key, int(hit.group(1))))
                break
    if re.search(r"--enable-chunked-prefill[ =]False|--no-enable-chunked-prefill", text):
        out.append(("chunked_prefill", 0))
    return tuple(out)


SGLANG_DP_EXPLICIT_FROM = (0, 4, 4)  # sgl-project/sglang PR #4390 (March 2025): --dp must be given with DP attention


def attention_dp_of(row: dict) -> int:
    """The expert-parallel degree a run's server ran its MoE model at with attention data-parallel beside it
    (perf/expert_parallel.py), from the text after ``server:`` in its setup; 1 where it ran none.

    SGLang ``--enable-dp-attention``: over ``--dp``/``--dp-size`` ranks; without them, over every ``--tp`` GPU before
    0.4.4 (server_args set dp_size = tp_size) and not at all from 0.4.4 (PR #4390 "Improve DP attention": "you need
    to explicitly specify --dp"; server_args ``_handle_data_parallelism``: dp_size 1 turns DP attention off). Its
    experts run tensor-parallel unless ``--ep-size``; for DeepSeek (k = 8 on 8 GPUs) the all-gather and
    reduce-scatter move the all-to-all's bytes, and the per-GPU expert work is the same. TensorRT-LLM
    ``enable_attention_dp: true``; vLLM ``--data-parallel-size N --enable-expert-parallel``. TensorRT-LLM
    ``--ep_size`` alone keeps attention tensor-parallel: timed as TP."""
    text = str(row.get("setup") or "")
    text = text[text.find("server:") :] if "server:" in text else ""
    dp = re.search(r"--(?:dp|dp-size|data-parallel-size)[ =](\d+)", text)
    if re.search(r"--enable-dp-attention|enable_attention_dp[: =]+true", text, re.IGNORECASE):
        if dp:
            return int(dp.group(1))
        version = tuple(int(x) for x in re.findall(r"\d+", str(row.get("engine_version") or ""))[:3])
        sglang = str(row.get("engine") or "").lower().startswith("sglang")
        early = sglang and bool(version) and version < SGLANG_DP_EXPLICIT_FROM
        return int(row.get("tensor_parallel") or 1) if early or not sglang else 1
    if dp and "--enable-expert-parallel" in text:
        return int(dp.group(1))
    return 1


def experts_tp_of(row: dict) -> bool:
    """Whether a run with attention data-parallel (``attention_dp_of`` over 1) ran its routed experts
    tensor-parallel over the same GPUs rather than expert-parallel: SGLang's ``--enable-dp-attention`` without
    ``--ep``/``--ep-size``/``--enable-ep-moe``/``--enable-deepep-moe`` all-gathers every rank's tokens into the fused
    MoE kernel of every GPU, which holds a 1 / tp slice of each of the E experts (sglang deepseek_v2.py: ``FusedMoE``
    unless EP is asked), so each GPU routes to and schedules all E experts (``roofline.StepCost.experts_fixed_s``)."""
    if attention_dp_of(row) <= 1 or not str(row.get("engine") or "").lower().startswith("sglang"):
        return False
    text = str(row.get("setup") or "")
    text = text[text.find("server:") :] if "server:" in text else ""
    return not re.search(r"--(?:ep|ep-size|expert-parallel-size)[ =]\d+|--enable-(?:ep|deepep)-moe", text)


def dp_chunk_share(row: dict) -> int:
    """What SGLang divides its chunked-prefill budget by on each DP attention rank (server_args: ``// 2`` where it set
    dp_size = tp_size itself, before 0.4.4; ``// dp_size`` since): 1 where the run had no DP attention or another
    engine."""
    dp = attention_dp_of(row)
    if dp == 1 or not str(row.get("engine") or "").lower().startswith("sglang"):
        return 1
    explicit = re.search(r"--(?:dp|dp-size)[ =]\d+", str(row.get("setup") or ""))
    return dp if explicit else 2


def unchunked(replica, version: str | None, max_context_tokens: int, server: tuple[tuple[str, int], ...]):
    """The replica's limits with chunked prefill turned off at start-up: the release line's unchunked policy
    and budget (vLLM V0: whole prompts before decodes, max(context, 2,048) tokens a step), the budget the
    server set where it set one."""
    from ..hardware.engines import release

    rel = release(replica.engine, version)
    if rel is None:
        return replica.limits
    budget = dict(server).get("max_num_batched_tokens")
    if budget is None and rel.unchunked_min_tokens is not None:
        budget = max(max_context_tokens, rel.unchunked_min_tokens)
    update = {"policy": rel.unchunked_policy} | ({"max_num_batched_tokens": budget} if budget else {})
    return replica.limits.model_copy(update=update)


def _rank_load(conc: int | None, rate: float | None, ep: int) -> tuple[int | None, float | None, int]:
    """One rank's share of a run's load over ``ep`` attention data-parallel ranks, and the ranks that ran it: a rate
    split evenly over all; clients over as many ranks as there are clients, at most ``ep``, each at the ceiling of
    its share (4 clients on 8 ranks: 4 ranks of 1)."""
    if ep == 1:
        return conc, rate, 1
    if rate is not None:
        return None, rate / ep, ep
    busy = min(ep, conc)
    return -(-conc // busy), None, busy


def moe_key(row: dict) -> tuple[str, str]:
    """(GPU architecture, weights format family): what a run's routed experts' efficiency factor is stored by
    (data/efficiency.csv ``moe_efficiency_factor``)."""
    from ..hardware.catalog import get_gpu
    from ..model.formats import get_format

    return get_gpu(row["gpu"]).architecture, get_format(_format_of(row["weights_format"])).family


def light_load(meta_row: dict) -> bool:
    """The light-load runs the request cost is fitted on: a closed loop of at most 4 clients, or at most 2
    requests/s (bench/fit_serving.py)."""
    if meta_row["load_kind"] == "concurrency":
        return float(meta_row["load"]) <= 4
    return float(meta_row["load"]) <= 2.0
