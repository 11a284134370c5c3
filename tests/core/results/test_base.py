"""The result bases (results/base.py): frozen, no extra keys; a sparse report leaves out the keys it was built
without and keeps those set to None."""

from __future__ import annotations

from typing import ClassVar

import pytest
from pydantic import ValidationError

from gpuplan_core.results.base import _Report, _Sparse


class _Point(_Report):
    x_s: float


class _Maybe(_Sparse):
    SOMETIMES: ClassVar[tuple[str, ...]] = ("capacity_per_s",)

    gpu: str
    capacity_per_s: float | None = None


class _Flat(_Sparse):
    inner: dict
    after: int

    def _shape(self, d: dict) -> dict:
        return {**d.pop("inner"), **d}


def test_frozen_and_closed():
    p = _Point(x_s=1.5)
    with pytest.raises(ValidationError):
        p.x_s = 2.0
    with pytest.raises(ValidationError, match="extra"):
        _Point(x_s=1.0, y_s=2.0)


def test_sparse_leaves_out_what_was_not_given():
    assert _Maybe(gpu="H100").model_dump() == {"gpu": "H100"}
    assert _Maybe(gpu="H100", capacity_per_s=None).model_dump() == {"gpu": "H100", "capacity_per_s": None}
    assert _Maybe(gpu="L4", capacity_per_s=2.5).model_dump() == {"gpu": "L4", "capacity_per_s": 2.5}


def test_shape_flattens_a_part():
    assert list(_Flat(inner={"a": 1, "b": 2}, after=3).model_dump()) == ["a", "b", "after"]
