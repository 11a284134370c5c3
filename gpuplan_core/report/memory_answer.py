"""The Memory page's answer in one sentence: memory per GPU at the layout the one answer runs (its pick's GPU count,
tensor x pipeline x data parallel, ZeRO stage and micro-batch), the count it takes, and the scenario's own need
beside it. Without a pick (or without prices), the memory engine's answer at the scenario's own layout."""

from __future__ import annotations

from ..common.text import gb
from ..results.memory import GpuFit, MemoryReport
from ..scenario.fields import MAX_LAYOUT_GPUS
from ..scenario.scenario import Scenario
from .answers import Answer, Headline, _job


def _training_limits(mem: MemoryReport, sc: Scenario, g: GpuFit) -> str:
    """Training: the largest micro-batch at this sequence length and the longest sequence at this micro-batch that
    the layout holds ('' for inference, or where neither changes anything)."""
    if mem.mode == "inference":
        return ""
    seq, batch = sc.request.sequence_tokens, mem.batch
    if g.fits:
        return (
            f"; it holds up to micro-batch {g.max_batch:,} of {seq:,}-token sequences, or {g.max_context:,}-token "
            f"sequences at micro-batch {batch:,}"
        )
    if g.max_context >= 128:
        return f"; at micro-batch {batch:,} sequences of up to {g.max_context:,} tokens fit"
    return ""


def _secondary(mem: MemoryReport, sc: Scenario) -> Headline:
    """The fourth headline: serving, the scenario's own need where it differs from the answer's (one GPU alone),
    else the KV cache per request; training, the model states per GPU."""
    own = mem.scenario_per_gpu_bytes
    if mem.mode != "inference":
        return Headline(label="Model states per GPU", value=gb(mem.budgets.get("model states")))
    if own is not None and own != mem.per_gpu_bytes:
        return Headline(
            label="One GPU alone would need" if sc.parallelism.gpus == 1 else "At your own layout, per GPU",
            value=gb(own),
            help="The memory engine's need at the scenario's own layout, not the answer's: a secondary figure",
        )
    return Headline(
        label="KV cache per request",
        value=gb(mem.kv_cache_bytes_per_token * mem.context_tokens, 2),
        help="The attention keys and values a request keeps for every token of its context (the 'KV cache')",
    )


def memory_answer(mem: MemoryReport, sc: Scenario) -> Answer:
    """How much memory one GPU needs and how many GPUs it takes, at the answer's layout where there is one."""
    a = mem.answer
    if a is None:
        return _memory_only(mem, sc)
    need = a.per_gpu_bytes
    g = mem.gpu_fit(a.gpu)
    batch = f"batch {a.micro_batch}" if mem.mode == "inference" else f"micro-batch {a.micro_batch}"
    copies = f" ({a.replicas:,} replicas)" if mem.mode == "inference" and a.replicas > 1 else ""
    sentence = (
        f"{mem.model} ({_job(sc)}, {batch}) needs {gb(need)} per GPU on the answer's layout, {a.where}: it takes "
        f"{a.gpus:,} x {a.label}{copies}, {gb(a.budget_bytes - need)} to spare on each" + _training_limits(mem, sc, g)
    )
    if mem.pools:  # a split: each pool's worker, neither of them 'the' layout
        split = "P/D: " + " + ".join(f"{m.workers:,} {m.role} TP {m.tp}" for m in mem.pools)
        sentence = (
            f"{mem.model} ({_job(sc)}, {batch}) on the answer's split ({split}): it takes {a.gpus:,} x {a.label}; "
            + "; ".join(_pool_text(m) for m in mem.pools)
        )
    own = mem.scenario_per_gpu_bytes
    if own is not None and own != need and not mem.pools:
        par = sc.parallelism
        zero = f", ZeRO {par.zero_stage}" if mem.mode != "inference" else ""
        settings = (  # training: the micro-batch and recompute the figure is at (the answer chose its own)
            f" at micro-batch {sc.request.batch_or_one:,} with "
            + ("no recompute" if sc.training.recompute == "none" else f"{sc.training.recompute} recompute")
            if mem.mode != "inference"
            else ""
        )
        sentence += (
            f"; one GPU alone{settings} would need {gb(own)}"
            if par.gpus == 1
            else f"; your own layout ({par.gpus:,} GPUs, TP {par.tp}, PP {par.pp}{zero}){settings} would need "
            f"{gb(own)} per GPU"
        )
    held = "Everything one GPU of the answer's layout holds (whole runtime), GB = 10^9 B"
    heads = [
        Headline(label="Memory per GPU", value=gb(need), help=held),
        Headline(label="GPUs", value=f"{a.gpus:,}", help="The GPUs the answer rents (every replica)"),
        Headline(label=f"Fits {a.gpus:,} x {a.label}?", value="yes"),
        _secondary(mem, sc),
    ]
    if mem.pools:  # the figure is a decode worker's; the prefill worker's in the fourth place
        decode = held.replace("the answer's layout", "a decode worker")
        heads[0] = Headline(label="Memory per GPU (decode worker)", value=gb(need), help=decode)
        pre = mem.pools[0]
        heads[3] = Headline(
            label="Prefill worker, per GPU",
            value=gb(pre.per_gpu_bytes),
            help=f"Everything one GPU of a prefill worker ({pre.layout}) holds, GB = 10^9 B",
        )
    return Answer(sentence=sentence + ".", headlines=heads, tone="good")


def _pool_text(m) -> str:
    """'each of the 4 prefill workers (1 x H100-SXM, TP 1) needs 21.3 GB per GPU, 50.9 GB to spare'."""
    each = f"each of the {m.workers:,} {m.role} workers" if m.workers > 1 else f"the {m.role} worker"
    return f"{each} ({m.layout}) needs {gb(m.per_gpu_bytes)} per GPU, {gb(m.budget_bytes - m.per_gpu_bytes)} to spare"


def _memory_only(mem: MemoryReport, sc: Scenario) -> Answer:
    """The memory engine's answer at the scenario's own layout (no prices searched, or the search found nothing: then
    it says so and never names a memory-only count as what it takes)."""
    need, n = mem.per_gpu_bytes, mem.layout.gpus
    searched = any(g.search is not None for g in mem.gpus)
    at = f" at {n} GPUs" if n > 1 else ""
    head = f"{mem.model} needs {gb(need)} per GPU{at} ({_job(sc)}, batch {mem.batch})"
    fitting = [g for g in mem.gpus if g.fits]
    nothing = f" The layout search finds nothing that runs it: {mem.answer_message}" if mem.answer_message else ""
    if sc.parallelism.gpu:
        g = next(x for x in mem.gpus if x.selected)
        if g.fits:
            hold = f"hold{'s' if n == 1 else ''} it with {gb(g.budget_bytes - need)} to spare"
            sentence = f"{head}: {n} x {g.label} {hold}{_training_limits(mem, sc, g)}.{nothing}"
            tone = "warn" if searched else "good"
        else:
            if searched:
                more = ""  # the search's own word follows: a memory-only count is not what it takes
            elif g.min_gpus:
                more = f"; by memory alone it takes {g.min_gpus:,} x {g.label}"
            else:
                more = f"; no layout of up to {MAX_LAYOUT_GPUS:,} holds it"
            short = f"{gb(need - g.budget_bytes)} short"
            at = f" at this layout ({mem.layout.text})" if searched else ""
            sentence = f"{head}: {n} x {g.label} is {short}{at}{more}{_training_limits(mem, sc, g)}.{nothing}"
            tone = "warn"
        fit_line = Headline(label=f"Fits {n} x {g.label}?", value="yes" if g.fits else "no")
    elif fitting:
        smallest = min(fitting, key=lambda g: g.budget_bytes)
        sentence = (
            f"{head}: {len(fitting)} of {len(mem.gpus)} GPU types hold it; the smallest is the {smallest.label} "
            f"({gb(smallest.budget_bytes)} usable)." + nothing
        )
        tone = "warn" if searched else "good"
        fit_line = Headline(label="GPU types that hold it", value=f"{len(fitting)} of {len(mem.gpus)}")
    else:
        fewest = mem.fewest
        more = (
            f"by memory alone the fewest are {fewest.min_gpus:,} x {fewest.label}"
            if fewest
            else f"no layout up to {MAX_LAYOUT_GPUS:,} does"
        )
        sentence, tone = f"{head}: no single GPU type holds it at this layout; {more}.{nothing}", "warn"
        fit_line = Headline(label="GPU types that hold it", value=f"0 of {len(mem.gpus)}")
    heads = [
        Headline(label="Memory per GPU", value=gb(need), help="Everything one GPU holds (whole runtime), GB = 10^9 B"),
        fit_line,
        Headline(label="Weights", value=gb(mem.weights_bytes_total), help="The model's weights, all GPUs together"),
        _secondary(mem, sc),
    ]
    return Answer(sentence=sentence.rstrip(), headlines=heads, tone=tone)
