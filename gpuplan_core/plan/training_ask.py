"""What the training search reads of the question (``TrainingAsk``): built once by the caller from the Scenario and
passed through training_search.py, training_layout.py, training_tried.py and training.py instead of the whole
Scenario, as the serving search takes ``search.ServingAsk``.

It holds the job, the request (the training sequence and micro-batch), the formats, the layout the user set, the
training inputs, the runtime assumptions (the memory budget's headroom) and the prices' terms. Not the site, the
traffic or the model source: the model arrives resolved, and a change to the site or the traffic changes no
training figure. It carries the names the memory question reads (``memory.request.memory_request`` takes it as it
takes a Scenario: job, request, formats, parallelism, training, assumptions and ``context_tokens``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..scenario.deployment import Pricing, RuntimeAssumptions
from ..scenario.layout import Parallelism, Training
from ..scenario.parts import Formats, Job, Request
from ..scenario.scenario import FIELDS, Scenario

_PARTS = ("job", "request", "formats", "parallelism", "training", "assumptions", "pricing")


@dataclass(frozen=True)
class TrainingAsk:
    """The parts of the scenario a training plan reads (frozen; equal for scenarios that differ elsewhere)."""

    job: Job
    request: Request
    formats: Formats
    parallelism: Parallelism
    training: Training
    assumptions: RuntimeAssumptions
    pricing: Pricing

    @classmethod
    def of(cls, sc: Scenario | TrainingAsk) -> TrainingAsk:
        """The ask of a scenario (an ask is its own)."""
        if isinstance(sc, TrainingAsk):
            return sc
        return cls(*(getattr(sc, p) for p in _PARTS))

    @property
    def context_tokens(self) -> int:
        """The training sequence length (Scenario.context_tokens for a training job)."""
        return self.request.sequence_tokens

    @property
    def finetune(self) -> bool:
        return self.job.mode == "finetune"

    @property
    def method(self) -> str:
        """The method the run trains with: full for pre-training, the job's for fine-tuning."""
        return self.job.training_method

    def with_(self, **update: Any) -> TrainingAsk:
        """A copy with these fields changed (flat names, as ``Scenario.with_``), each part validated again."""
        by_part: dict[str, dict[str, Any]] = {}
        for k, v in update.items():
            part = FIELDS[k]
            if part not in _PARTS:
                raise KeyError(f"{k}: not a part the training plan reads ({part})")
            by_part.setdefault(part, {})[k] = v
        new = {
            p: type(getattr(self, p)).model_validate({**getattr(self, p).model_dump(), **u}) for p, u in by_part.items()
        }
        return replace(self, **new)
