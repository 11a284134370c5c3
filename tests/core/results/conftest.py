"""Shared by the results tests: the model summary every report starts with (Llama-3.1-8B's exact counts)."""

from __future__ import annotations

import pytest

from gpuplan_core.api._shared import model_summary
from gpuplan_core.results.memory import ModelSummary
from gpuplan_core.scenario.scenario import Scenario


@pytest.fixture(scope="session")
def summary() -> ModelSummary:
    return model_summary(Scenario(preset="Llama-3.1-8B"))
