"""Hand-made picks (results/plan.Pick) and offers (pricing/offers.Offer) for the code that reads a pick or an offer
without running the layout search or reading a pricing file."""

from gpuplan_core.pricing.offers import Offer
from gpuplan_core.results.plan import Pick


def pick(gpu: str = "H100-SXM", gpus: int = 1, tp: int = 1, pp: int = 1, **kw) -> Pick:
    """A pick of ``gpus`` x ``gpu`` at tp x pp (one replica of it unless ``replicas``), $2 per GPU-hour over 730
    hours a month, meeting its targets; any other field by keyword."""
    fields = dict(
        gpu=gpu,
        weights_format="bf16",
        offer_id="test-offer",
        provider="test",
        product="test node",
        billing_model="on_demand",
        gpus=gpus,
        nodes=1,
        tp=tp,
        pp=pp,
        layout=f"{tp * pp} x {gpu}",
        replicas=max(1, gpus // (tp * pp)),
        monthly_usd=2.0 * gpus * 730,
        run_cost_usd=None,
        price_per_gpu_hour_usd=2.0,
        misses=[],
        why=[],
        source="hand-made",
        price_as_of=None,
    )
    return Pick(**{**fields, **kw})


def offer(**kw) -> Offer:
    """One 8 x H100 SXM node on demand at 16 USD a node-hour (2 USD per GPU-hour); any other field by keyword."""
    base = dict(
        offer_id="x-h100-8",
        provider="X",
        product="8 x H100",
        gpu="H100-SXM",
        gpus_per_node=8,
        billing_model="on_demand",
        price_per_node_hour_usd=16.0,
        price_per_gpu_hour_usd=2.0,
    )
    return Offer(**(base | kw))
