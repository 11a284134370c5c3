"""The base of every typed result: frozen, no extra keys; ``_Sparse`` leaves out of its JSON the keys a report was
built without (``SOMETIMES``), as the CLI has always written them."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, model_serializer


class _Report(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class _Sparse(_Report):
    """A report some of whose keys exist only where they apply (``SOMETIMES``): a field of those that the report
    was built without is left out of its JSON, as the CLI has always written it (None where built with None)."""

    SOMETIMES: ClassVar[tuple[str, ...]] = ()

    @model_serializer(mode="wrap")
    def _sparse(self, handler):
        d = handler(self)
        for k in self.SOMETIMES:
            if k not in self.model_fields_set:
                d.pop(k, None)
        return self._shape(d)

    def _shape(self, d: dict) -> dict:
        """The JSON's final form (a report that flattens a part into its top level overrides this)."""
        return d
