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
    hybrid sharding = HSDP (ZeRO-3 over groups of ``shard_gpus`` data-parallel ranks): the weights' gathers and
                      the gradients' reduce-scatter run inside a group, (S - 1) / S of ZeRO-3's volume over NVLink
                      where the group's tp x S GPUs sit in one machine; then each GPU's 1 / S of the gradients is
                      all-reduced across the dp / S groups, 2 (R - 1) / R x grad bytes x params / S over the network
                      (R = dp / S); both wait on the same compute's overlap share.
    paged optimizer = the states of a paged optimizer (bitsandbytes) that do not fit the GPU beside the rest, paged
                      in for the optimizer step and out again, 2 x their bytes / (PCIe x16 x 0.8) per step, exposed.
    activation offloading = one micro-batch's kept activations (memory/training.py) copied to the host during the
                      forward and back during the backward, t = bytes / (PCIe x16 of the GPU's generation x 0.8)
                      each way, each on its own stream beside its pass: exposed max(0, t - c / 3) +
                      max(0, t - 2 c / 3), c the micro-batch's compute (the forward a third of it, the backward two).
    expert parallel = the routed experts spread over ep GPUs of the data-parallel group: 4 all-to-alls per MoE
                      layer (dispatch and combine, forward and backward); their weights' gradients are reduced
                      over the dp / ep expert-data-parallel ranks, 1 / ep of them per GPU.
"""

from __future__ import annotations

from ..hardware.catalog import GPU
from ..model.arch import ModelArch, params_total, routed_expert_params
from .training_setup import StepLayout, TrainingEfficiency

HOST_LINK_GB_S = {"Ampere": 32.0, "Ada": 32.0, "Hopper": 64.0, "Blackwell": 64.0}  # PCIe 4.0 / 5.0 x16, a direction
HOST_LINK_GB_S_OTHER = 16.0  # PCIe 3.0 x16 (Volta, Turing) and accelerators the table does not name
HOST_COPY_EFFICIENCY = 0.8  # pinned-memory copies reach about 80% of the link (CUDA's bandwidthTest)


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
    """The data-parallel traffic of a step (over the data- and context-parallel ranks FSDP shards over, or HSDP's
    group and across its groups) that the step's compute does not hide."""
    group = lay.dp * lay.cp
    if group <= 1:
        return 0.0
    local = local_params(m, lay)
    grads = 0.0 if lay.frozen_base else local  # adapters' gradients are negligible
    grad_bytes = 2.0 if lay.precision == "bf16" else 4.0 if lay.zero_stage >= 3 else 2.0
    if lay.zero_stage >= 3:  # weights gathered for forward and backward, per micro-batch; grads reduce-scattered
        ring = 2 * 2.0 * local * lay.micro_batches + grad_bytes * grads
    else:  # one all-reduce of the gradients per step
        ring = 2 * grad_bytes * grads
    spans = lay.tp * lay.pp * group > lay.gpus_per_node
    shard = lay.cp * lay.shard_gpus if lay.zero_stage >= 3 and 0 < lay.shard_gpus < lay.dp else group
    group_spans = spans if shard == group else lay.tp * shard > lay.gpus_per_node  # HSDP: a group in one machine
    t = ring * (shard - 1) / shard / collective_bw(gpu, group_spans, lay, eff)
    if shard < group:  # HSDP: each GPU's shard of the gradients all-reduced across the groups
        replicas = group // shard
        t += 2 * grad_bytes * grads / shard * (replicas - 1) / replicas / collective_bw(gpu, spans, lay, eff)
    return max(0.0, t - eff.overlap * compute_s)


def activation_offload_s(gpu: GPU, lay: StepLayout, compute_s: float) -> float:
    """One micro-batch's activation copies to the host and back not hidden behind the forward (a third of the
    micro-batch's compute ``compute_s``) and the backward (two thirds) they run beside (module docstring)."""
    if not lay.offload_bytes_per_micro_batch:
        return 0.0
    link = HOST_LINK_GB_S.get(gpu.architecture, HOST_LINK_GB_S_OTHER) * 1e9 * HOST_COPY_EFFICIENCY
    t = lay.offload_bytes_per_micro_batch / link
    return max(0.0, t - compute_s / 3) + max(0.0, t - 2 * compute_s / 3)


def paged_optimizer_s(gpu: GPU, lay: StepLayout) -> float:
    """A paged optimizer's states that do not fit the GPU beside the rest: paged in for the optimizer step and out
    again as the next forward's activations grow, 2 x their bytes over PCIe per step, not hidden (page faults stall
    the kernels that touch them)."""
    if not lay.paged_bytes_per_step:
        return 0.0
    link = HOST_LINK_GB_S.get(gpu.architecture, HOST_LINK_GB_S_OTHER) * 1e9 * HOST_COPY_EFFICIENCY
    return 2.0 * lay.paged_bytes_per_step / link
