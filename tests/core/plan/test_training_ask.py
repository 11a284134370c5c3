"""The training search's question (plan/training_ask.py): the parts of the Scenario it reads, and nothing else."""

import pytest
from pydantic import ValidationError

from gpuplan_core.plan.training_ask import TrainingAsk
from gpuplan_core.plan.training_search import training_candidates
from gpuplan_core.pricing.csv_file import load_pricing
from gpuplan_core.scenario.scenario import Scenario

SC = Scenario(mode="training", params=1e9, training_tokens=1e10, gpu="H100-SXM")


def test_the_ask_holds_the_scenarios_own_parts():
    ask = TrainingAsk.of(SC)
    for part in ("job", "request", "formats", "parallelism", "training", "assumptions", "pricing"):
        assert getattr(ask, part) is getattr(SC, part)
    assert ask.context_tokens == SC.context_tokens == 4096 and ask.method == "full"
    assert TrainingAsk.of(ask) is ask


def test_the_site_and_the_traffic_are_not_part_of_it():
    other = SC.with_(region="germany", pue=1.5, requests_per_day=1000)
    assert TrainingAsk.of(other) == TrainingAsk.of(SC)
    assert TrainingAsk.of(SC.with_(zero_stage=2)) != TrainingAsk.of(SC)


def test_with_routes_flat_names_and_validates_the_part():
    ask = TrainingAsk.of(SC).with_(zero_stage=3, recompute="selective")
    assert (ask.parallelism.zero_stage, ask.training.recompute) == (3, "selective")
    assert ask.parallelism.zero_auto is SC.parallelism.zero_auto  # given whole, the part keeps whether to search
    with pytest.raises(ValidationError):
        TrainingAsk.of(SC.with_(gpus=4)).with_(tp=3)  # 4 GPUs are no multiple of tp 3
    with pytest.raises(KeyError):
        TrainingAsk.of(SC).with_(region="germany")  # the site is not read


def test_the_search_answers_the_same_for_the_scenario_and_its_ask():
    offers = [o for o in load_pricing().offers if o.gpu == "H100-SXM"][:6]
    a, ra, sa = training_candidates(SC.model(), SC, offers)
    b, rb, sb = training_candidates(SC.model(), TrainingAsk.of(SC), offers)
    assert [c.model_dump() for c in a] == [c.model_dump() for c in b] and ra == rb and sa == sb
