"""The static views of the step model on one replica: ``batch`` requests arriving at once on an empty replica (one
request alone at batch 1), their prompts read in one engine step, then decode steps of the whole batch; TTFT, TPOT,
throughput and the batch sweep. Every step is ``steps.StepModel``'s, the engine step the serving simulation runs
(simulate.py), so one request alone here and one request alone under the step loop take the same time."""

from __future__ import annotations

from dataclasses import dataclass

from ..hardware.catalog import GPU
from ..model.arch import ModelArch, matmul_params_active
from ..model.formats import get_format
from ..results.perf import PhaseReport, StaticPerf, SweepPoint
from .efficiency import PerfAssumptions, mbu_curve, mfu_curve, weight_mbu_max
from .roofline import Workload, expected_experts_touched, weight_bytes_touched
from .speculative import spec_note
from .steps import StepModel, step_model


def _decode_contexts(prompt: int, output: int) -> list[int]:
    """The contexts a static batch's mean decode step is sampled at: up to 9 over prompt .. prompt + output - 1."""
    steps = max(1, output - 1)
    n = min(9, steps)
    return [prompt + round(i * (steps - 1) / max(1, n - 1)) for i in range(n)] if n > 1 else [prompt]


def _mean_decode_s(sm: StepModel, batch, prompt, output) -> float:
    """Average decode-step time over contexts prompt .. prompt + output - 1 (not first+last / 2 alone:
    sampled at up to 9 points, exact for the piecewise-linear step time; StepModel.decode_s, no report): a
    speculating replica's steps are its verify steps with the draft's steps before each."""
    times = [sm.decode_s(batch, c) for c in _decode_contexts(prompt, output)]
    return sum(times) / len(times)


def _tpot_s(sm: StepModel, batch, prompt, output) -> float:
    """Time per output token: the mean decode step over the tokens one step writes (1; speculating,
    ``sm.per_step`` = 1 + a + ... + a^k: speculative.spec_tpot_s)."""
    step = _mean_decode_s(sm, batch, prompt, output)
    return step if sm.draft is None else step / sm.per_step


def _mean_decode_time(sm: StepModel, batch, prompt, output) -> tuple[float, PhaseReport]:
    """``_tpot_s`` and the report of the middle sampled step (the target's pass)."""
    ctxs = _decode_contexts(prompt, output)
    return _tpot_s(sm, batch, prompt, output), sm.decode(batch, ctxs[len(ctxs) // 2])


@dataclass(frozen=True)
class StaticTimes:
    """The figures of ``predict`` that a layout's judgement reads (plan/capacity.py), float for float predict's,
    worked out without its reports (a question judges dozens of layouts)."""

    ttft_s: float
    tpot_s: float
    e2e_request_s: float
    decode_tokens_per_s: float
    prefill_tokens_per_s: float


def static_times(
    m: ModelArch,
    gpu: GPU,
    wl: Workload,
    batch: int,
    prompt: int,
    output: int,
    *,
    pa: PerfAssumptions | None = None,
    engine: str | None = None,
) -> StaticTimes:
    """``predict``'s TTFT, TPOT, end to end and token rates of ``batch`` requests (the same steps and formulas)."""
    pa = pa or PerfAssumptions()
    if batch < 1 or prompt < 1 or output < 1:
        raise ValueError("batch, input_tokens and output_tokens must be >= 1")
    sm = step_model(m, gpu, wl, pa, engine)
    ttft = sm.first_token_s(batch, prompt)
    tpot = _tpot_s(sm, batch, prompt, output)
    return StaticTimes(ttft, tpot, ttft + (output - 1) * tpot, batch / tpot, batch * prompt / ttft)


def compute_bound_batch(m: ModelArch, gpu: GPU, wl: Workload, pa: PerfAssumptions, limit: int = 1 << 20) -> int | None:
    """Smallest batch at which decode's weight matmuls turn compute-bound (their FLOPs take as long
    as reading the weights); attention's KV reads stay memory-bound at any batch."""
    wf = get_format(wl.weights_format)
    peak, math_used = gpu.dense_peak_flops(get_format(wl.weights_format).math)
    shard = wl.tp * wl.pp
    w_mbu_max = weight_mbu_max(gpu, wf, pa)

    def compute_bound(b: int) -> bool:
        w = weight_bytes_touched(m, wf, b) / shard
        mem_t = w / (
            gpu.bandwidth_bytes_per_s * mbu_curve(w / (m.num_layers / wl.pp), w_mbu_max, pa.mbu_half_bytes_per_layer)
        )
        comp_t = 2 * matmul_params_active(m) * b / shard / (peak * mfu_curve(b, pa, math_used))
        return comp_t >= mem_t

    if not compute_bound(limit):
        return None
    lo, hi = 0, 1
    while not compute_bound(hi):
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if compute_bound(mid) else (mid, hi)
    return hi


def predict(
    m: ModelArch,
    gpu: GPU,
    wl: Workload,
    batch: int,
    prompt: int,
    output: int,
    *,
    pa: PerfAssumptions | None = None,
    with_compute_bound_batch: bool = True,
    engine: str | None = None,
) -> StaticPerf:
    """``batch`` requests of ``prompt`` + ``output`` tokens arriving together on an empty replica: one prefill
    step of every prompt (TTFT; speculating, the draft's prefill of them after it), then decode steps of the whole
    batch (TPOT: their mean over the contexts).
    ``engine``: time the steps with that engine's measured kernels where its tables cover them (steps.StepModel)."""
    pa = pa or PerfAssumptions()
    sm = step_model(m, gpu, wl, pa, engine)
    if batch < 1 or prompt < 1 or output < 1:
        raise ValueError("batch, input_tokens and output_tokens must be >= 1")
    fmt = get_format(wl.weights_format)
    peak, math_used = gpu.dense_peak_flops(fmt.math)
    note = None
    if fmt.math == "fp32" and math_used == "fp32":
        note = f"{gpu.gpu} has no TF32 tensor cores: FP32 matmuls run on CUDA cores ({peak / 1e12:,.1f} TFLOP/s)."
    elif math_used != {"fp32": "tf32"}.get(fmt.math, fmt.math):
        note = f"{gpu.gpu} has no {fmt.math.upper()} tensor cores: matmuls run in {math_used.upper()} (dense peak)."
    pre = sm.prefill(batch, prompt)
    ttft = pre.time_s if sm.draft is None else sm.first_token_s(batch, prompt)  # the draft's prefill after it
    notes = []
    tpot, dec = _mean_decode_time(sm, batch, prompt, output)
    if sm.draft is not None:
        notes.append(spec_note(wl))
    e2e = ttft + (output - 1) * tpot
    moe_note = None
    if m.is_moe:
        touched = expected_experts_touched(m, batch)
        moe_note = (
            f"Decode reads {touched:.1f} of {m.num_experts} experts per MoE layer at batch {batch} "
            f"(active-only weight reads hold only while batch x {m.experts_per_token} is small next to "
            f"{m.num_experts})."
        )
    ridge = peak / gpu.bandwidth_bytes_per_s
    return StaticPerf(
        gpu=gpu.gpu,
        gpu_count=wl.tp * wl.pp,
        tp=wl.tp,
        pp=wl.pp,
        math_format=math_used,
        math_note=note,
        peak_flops_per_s=peak,
        bandwidth_bytes_per_s=gpu.bandwidth_bytes_per_s,
        ridge_flops_per_byte=ridge,
        batch=batch,
        prompt_tokens=prompt,
        output_tokens=output,
        prefill=pre,
        decode=dec,
        ttft_s=ttft,
        tpot_s=tpot,
        tpot_inclusive_s=e2e / output,
        e2e_request_s=e2e,
        decode_tokens_per_s_per_sequence=1 / tpot,
        decode_tokens_per_s=batch / tpot,
        output_tokens_per_s=batch * output / e2e,
        prefill_tokens_per_s=batch * prompt / ttft,
        compute_bound_batch=compute_bound_batch(m, gpu, wl, pa) if with_compute_bound_batch else None,
        moe_note=moe_note,
        notes=notes,
    )


def decode_sweep(
    m: ModelArch,
    gpu: GPU,
    wl: Workload,
    context: int,
    max_batch: int,
    pa: PerfAssumptions | None = None,
    engine: str | None = None,
) -> list[SweepPoint]:
    """Decode step at batch 1, 2, 4, ... up to max_batch (and max_batch itself): the roofline's batch sweep."""
    sm = step_model(m, gpu, wl, pa or PerfAssumptions(), engine)
    out = []
    batches = [1 << i for i in range(0, 21) if (1 << i) < max(1, max_batch)] + [max(1, max_batch)]
    for b in batches:
        p = sm.decode(b, context)
        out.append(
            SweepPoint(
                batch=b,
                intensity_flops_per_byte=p.intensity_flops_per_byte,
                achieved_flops_per_s=p.achieved_flops_per_s,
                step_time_s=p.time_s,
                tokens_per_s=b / p.time_s,
                bound=p.bound,
            )
        )
    return out
