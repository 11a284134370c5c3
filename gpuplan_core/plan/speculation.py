"""Speculative decoding weighed by the serving search. Where the scenario names a draft model
(``spec_draft_params``), or the model ships a multi-token-prediction module (DeepSeek-V3/R1, model/draft.py
``mtp_draft``) and ``spec_mtp`` is "weigh" (the default), every layout and offer is judged twice: decoding plainly, and
speculating with the draft (perf/speculative.py; the step loop runs the draft's steps, its prefill of the prompts
and the verify steps, and the memory budget holds the draft's weights and KV cache, so the capacity, first-token
time and time per token under load are the speculating replica's own). Each offer renting each layout keeps
speculation only where it is cheaper at the targets:

    speculate   when it meets every target and plain decoding misses one, or both meet them and it costs less a
                month (strictly: a tie decodes plainly)
    else        plain decoding

so the pick is the cheapest of both, and it says which it runs and what the other costs (``Pick.speculation``, a
line of its why, and the why-chain's 'Speculative decoding' step: plan/why.py). Without a draft nothing changes.
"""

from __future__ import annotations

from collections.abc import Callable

from ..common.text import usd
from ..model.arch import ModelArch
from ..model.draft import expected_tokens_per_verify, mtp_draft
from ..results.plan import Pick, Speculation
from ..scenario.scenario import Scenario


def weighs_speculation(sc: Scenario, m: ModelArch | None = None) -> bool:
    """Whether the serving search weighs speculative decoding: the scenario names a draft model, or its model
    (``m``, else the scenario's) ships an MTP module and ``spec_mtp`` is "weigh"."""
    a = sc.assumptions
    if a.spec_draft_params:
        return True
    return a.spec_mtp == "weigh" and bool((m or sc.model()).mtp_layers)


def plain(sc: Scenario) -> Scenario:
    """The scenario decoding plainly (its draft model and the model's MTP module left out)."""
    off = {"spec_draft_params": None, "spec_mtp": "off"}
    return sc.model_copy(update={"assumptions": sc.assumptions.model_copy(update=off)})


def speculating(sc: Scenario) -> Scenario:
    """The scenario speculating: with its draft model where it names one, else with the model's MTP module."""
    if sc.assumptions.spec_draft_params:
        return sc
    return sc.model_copy(update={"assumptions": sc.assumptions.model_copy(update={"spec_mtp": "on"})})


def draft_text(sc: Scenario, m: ModelArch | None = None) -> str:
    """The scenario's draft in words: 'a 1B draft model proposing 4 tokens a step at acceptance 0.70 (2.77 tokens
    a step)', or the model's MTP module with its acceptance's source."""
    a = sc.assumptions
    if not a.spec_draft_params:
        d = mtp_draft(m or sc.model())
        return (
            f"the model's MTP module proposing {d.tokens} token{'s' if d.tokens > 1 else ''} a step at acceptance "
            f"{d.acceptance:.2f} ({d.tokens_per_verify:.2f} tokens a step; {d.source})"
        )
    tokens = expected_tokens_per_verify(a.spec_tokens, a.spec_acceptance)
    return (
        f"a {a.spec_draft_params / 1e9:g}B draft model proposing {a.spec_tokens} tokens a step at acceptance "
        f"{a.spec_acceptance:.2f} ({tokens:.2f} tokens a step)"
    )


def _key(p: Pick) -> tuple:
    return p.offer_id, p.layout, p.weights_format


def _cheaper(spec: Pick, base: Pick) -> bool:
    """Speculating is cheaper at the targets: it meets them where plain decoding does not, or costs less."""
    if spec.misses or base.misses:
        return not spec.misses
    return spec.rank_cost < base.rank_cost


def _best(picks: list[Pick]) -> str:
    """The cheapest of ``picks`` that meets every target, in words ('' where none does)."""
    ok = [p for p in picks if not p.misses]
    if not ok:
        return ""
    p = min(ok, key=lambda p: (p.rank_cost, p.ttft_s or 0.0))
    return f"{usd(p.monthly_usd)} a month on {p.layout} ({p.offer_id})" if p.monthly_usd is not None else p.layout


def _weighed(spec: Pick, base: Pick, draft: str, best: dict[bool, str]) -> Pick:
    """The better of the two picks of one offer and layout, with what the other costs and a line of why;
    ``best``: the cheapest speculating (True) and plain (False) picks meeting the targets, in words."""
    runs = _cheaper(spec, base)
    info = Speculation(
        runs=runs,
        draft=draft,
        monthly_usd_with=spec.monthly_usd,
        monthly_usd_without=base.monthly_usd,
        misses_with=list(spec.misses),
        misses_without=list(base.misses),
        other_best=best[not runs],
    )
    chosen = spec if runs else base
    return chosen.model_copy(update={"speculation": info, "why": [*chosen.why, speculation_line(info)]})


def speculation_line(s: Speculation) -> str:
    """Why the pick speculates or not, in one line."""

    def cost(usd_month: float | None, misses: list[str]) -> str:
        text = f"{usd(usd_month)} a month" if usd_month is not None else "no monthly cost"
        return text + (f" (misses {misses[0]})" if misses else "")

    with_, without = cost(s.monthly_usd_with, s.misses_with), cost(s.monthly_usd_without, s.misses_without)
    best = s.other_best or "none meets the targets"
    if s.runs:
        return (
            f"speculative decoding with {s.draft}: {with_}, against {without} decoding plainly here; the cheapest "
            f"decoding plainly: {best}"
        )
    return (
        f"decodes plainly: {without}; speculative decoding with {s.draft} is no cheaper here: {with_}; the cheapest "
        f"speculating: {best}"
    )


def weigh(search: Callable[[Scenario], tuple], sc: Scenario):
    """``search`` (the serving search of a scenario, returning rent.Found) run decoding plainly and speculating,
    each offer and layout keeping the cheaper at the targets (the module docstring), in the plain search's order
    (picks the speculating search alone made follow). The layouts judged are both searches'."""
    base, spec = search(plain(sc)), search(speculating(sc))
    draft, best = draft_text(sc), {True: _best(spec.picks), False: _best(base.picks)}
    by_key = {_key(p): p for p in spec.picks}
    picks = [_weighed(by_key.pop(_key(p)), p, draft, best) if _key(p) in by_key else p for p in base.picks]
    picks += list(by_key.values())
    return base._replace(picks=picks, layouts=[*base.layouts, *spec.layouts], unjudged=base.unjudged)
