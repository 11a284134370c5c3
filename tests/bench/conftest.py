"""The bench tests' fake aiconfigurator, in place of the package (tests/bench/fake_aic.py)."""

from __future__ import annotations

import pytest

from bench import aic_estimator
from tests.bench.fake_aic import fake_sdk


@pytest.fixture
def aic(monkeypatch):
    calls: list = []
    monkeypatch.setattr(aic_estimator, "load_sdk", lambda: fake_sdk(calls))
    out = aic_estimator.Aic()
    out.calls = calls
    return out
