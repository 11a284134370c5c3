"""The training step's traffic between GPUs (perf/training_step.py adds it to the step): tensor-parallel
all-reduces, ring attention's key/value passes and the experts' all-to-alls inside each micro-batch, the pipeline's
sends between stages, and the data-parallel collectives of the step, each over NVLink inside a machine or the
offer's network across machines, at the fitted share of the link (``network_efficiency``).

    pipeline sends  = each stage passes a micro-batch's activations forward and their gradients back
                      (b s / cp x h x 2 bytes / tp, sequence parallel), once per model chunk: interleaved 1F1B
                      with v chunks per stage crosses v x the stage boundaries (Narayanan et al. 2021, section
                      2.2: "the amount of communication also increases by v"). Megatron-Bridge and NeMo send 1F1B's
                      in one blocking batch (batch_p2p_comm: exposed) and overlap interleaved sends with the next
                      chunk's compute (overlap_p2p_comm, set when v > 1: the fitted overlap share of a micro-batch's
                      compute hides them). Megatron's rank order puts the pipeline outermost, so stage neighbours
                      sit on other machines once the job spans machines.
    expert parallel = the routed experts spread over ep GPUs of the data-parallel group: 4 all-to-alls per MoE
                      layer (dispatch and combine, forward and backward); their weights' gradients are reduced
                      over the dp / ep expert-data-parallel ranks, 1 / ep of them per GPU.
"""

from __future__ import annotations

from ..hardware.catalog import GPU
from ..model.arch import ModelArch, params_total, routed_expert_params
from .training_setup import StepLayout, TrainingEfficiency


def collective_bw(gpu: GPU, spans_nodes: bool, lay: StepLayout, eff: TrainingEfficiency) -> float:
    """Bytes per second one GPU moves in a collective: the network per GPU across machines, else its NVLink."""
    if spans_nodes:
        return lay.inter_node_gbit_s_per_gpu / 8 * 1e9 * eff.network_efficiency
    link = gpu.link_gb_s_per_direction or 32.0
    return link * 1e9 * eff.network_efficiency


def local_params(m: ModelArch, lay: StepLayout) -> float:
    """Parameters one GPU holds before ZeRO: its tp x pp share, the routed experts' 1 / ep of that."""
    experts = routed_expert_params(m) if m.is_moe and lay.ep > 1 else 0
    return (params_total(m) - experts * (1 - 1 / lay.ep)) / (lay.tp * lay.pp)


def exchange_s(m: ModelArch, gpu: GPU, lay: StepLayout, eff: TrainingEfficiency, tokens: float) -> float:
    """One micro-batch's tensor-parallel all-reduces, ring attention's key/value passes and the experts'
    all-to-alls, none of them hidden."""
    layers = m.num_layers / lay.pp
    t = 0.0
    if lay.tp > 1:
        ring = 2 * (lay.tp - 1) / lay.tp * tokens * m.hidden_size * 2.0
        calls = 4 + (2 if lay.recompute != "none" else 0)
        hidden = eff.tp_overlap_by_kernels.get(lay.kernels, eff.tp_overlap) if lay.tp_comm_overlap else 0.0
        t += (1 - hidden) * calls * layers * ring / collective_bw(gpu, lay.tp > lay.gpus_per_node, lay, eff)
    if lay.cp > 1:
        kv_width = 2 * (m.num_kv_heads * m.d if not m.is_mla else m.kv_lora_rank + m.qk_rope_head_dim)
        passes = 3 * (lay.cp - 1) * tokens * kv_width * 2.0 * layers
        t += passes / collective_bw(gpu, lay.tp * lay.cp > lay.gpus_per_node, lay, eff)
    if m.is_moe and lay.ep > 1:
        moe_layers = (m.num_layers - m.first_dense_layers) / lay.pp
        a2a = 4 * moe_layers * tokens * m.experts_per_token * m.hidden_size * 2.0 * (lay.ep - 1) / lay.ep / lay.tp
        t += a2a / collective_bw(gpu, lay.ep * lay.tp > lay.gpus_per_node, lay, eff)
    return t


def pipeline_sends_s(
    m: ModelArch, gpu: GPU, lay: StepLayout, eff: TrainingEfficiency, tokens: float, compute_s: float
) -> float:
    """One micro-batch's sends between pipeline stages not hidden (module docstring): 2 x v x tokens x h x 2 bytes
    / tp, less the overlap share of the micro-batch's compute ``compute_s`` when interleaved (v > 1)."""
    if lay.pp <= 1:
        return 0.0
    volume = 2 * lay.virtual_stages * tokens * m.hidden_size * 2.0 / lay.tp
    sends = volume / collective_bw(gpu, lay.gpus > lay.gpus_per_node, lay, eff)
    return max(0.0, sends - eff.overlap * compute_s) if lay.virtual_stages > 1 else sends


def data_parallel_s(m: ModelArch, gpu: GPU, lay: StepLayout, eff: TrainingEfficiency, compute_s: float) -> float:
    """The data-parallel traffic of a step (over the data- and context-parallel ranks FSDP shards over) that the
    step's compute does not hide."""
    group = lay.dp * lay.cp
    if group <= 1:
        return 0.0
    local = local_params(m, lay)
    grads = 0.0 if lay.frozen_base else local  # adapters' gradients are negligible
    grad_bytes = 2.0 if lay.precision == "bf16" else 4.0 if lay.zero_stage >= 3 else 2.0
    if lay.zero_stage >= 3:  # weights gathered for forward and backward, per micro-batch; grads reduce-scattered
        volume = (2 * 2.0 * local * lay.micro_batches + grad_bytes * grads) * (group - 1) / group
    else:  # one all-reduce of the gradients per step
        volume = 2 * grad_bytes * grads * (group - 1) / group
    spans = lay.tp * lay.pp * group > lay.gpus_per_node
    return max(0.0, volume / collective_bw(gpu, spans, lay, eff) - eff.overlap * compute_s)
