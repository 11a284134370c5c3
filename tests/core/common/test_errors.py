"""common/errors.py: a validation error as one sentence naming the field and what is allowed."""

from typing import Literal

import pytest
from pydantic import BaseModel, Field, ValidationError, model_validator

from gpuplan_core.common.errors import describe


class Probe(BaseModel):
    count: int = Field(1, ge=1, le=10)
    rate: float = Field(1.0, gt=0)
    small: int = Field(1, lt=5)
    kind: Literal["a", "b"] = "a"

    @model_validator(mode="after")
    def _pair(self):
        if self.count == 7:
            raise ValueError("count: 7 is unlucky")
        return self


def _described(**fields) -> str:
    with pytest.raises(ValidationError) as exc:
        Probe(**fields)
    return describe(exc.value)


@pytest.mark.parametrize(
    "fields, sentence",
    [
        ({"count": 0}, "count: Input should be greater than or equal to 1 (allowed: >= 1)"),
        ({"count": 11}, "count: Input should be less than or equal to 10 (allowed: <= 10)"),
        ({"rate": 0}, "rate: Input should be greater than 0 (allowed: > 0.0)"),
        ({"small": 5}, "small: Input should be less than 5 (allowed: < 5)"),
        ({"kind": "c"}, "kind: Input should be 'a' or 'b' (allowed: 'a' or 'b')"),
        ({"count": "many"}, "count: Input should be a valid integer, unable to parse string as an integer"),
    ],
)
def test_each_error_names_the_field_and_what_is_allowed(fields, sentence):
    assert _described(**fields) == sentence


def test_several_errors_are_joined_in_one_sentence():
    assert _described(count=0, kind="z") == (
        "count: Input should be greater than or equal to 1 (allowed: >= 1); "
        "kind: Input should be 'a' or 'b' (allowed: 'a' or 'b')"
    )


def test_a_validator_s_message_that_names_its_field_is_not_prefixed_twice():
    assert _described(count=7) == "count: 7 is unlucky"  # "Value error, " removed, no "count: count: "


def test_other_exceptions_are_their_own_text():
    assert describe(ValueError("gpu: unknown GPU 'X'")) == "gpu: unknown GPU 'X'"
