"""Shared by the scenario tests: the sentence a part's validation error reads as (common/errors.describe)."""

import pytest
from pydantic import ValidationError

from gpuplan_core.common.errors import describe


@pytest.fixture
def refused():
    """refused(Part, **fields) -> the one sentence the validation error reads as (fails if the part validates)."""

    def _refused(part, **fields) -> str:
        with pytest.raises(ValidationError) as exc:
            part(**fields)
        return describe(exc.value)

    return _refused
