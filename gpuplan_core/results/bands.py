"""How far to trust one predicted number: the type of an error band (perf/bands.py computes them)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, computed_field

from ..common.text import counted


class ErrorBand(BaseModel):
    """How far to trust one predicted number: the typical error of comparable published measurements (those of
    its regime), or, where there are none, a plain statement that the number is a roofline estimate."""

    model_config = ConfigDict(frozen=True)

    regime: str
    points: int = Field(description="published measurements in the regime")
    band: float | None = Field(description="their median absolute relative error; None: no comparable point")
    bias: float | None = Field(description="their median signed error, + where the model was optimistic (faster)")
    phase_band: float | None = Field(None, description="where the regime is empty: the phase's band on all GPUs")
    phase_points: int = 0

    @property
    def provenance(self) -> str:
        if self.points:
            return f"calibrated roofline: {counted(self.points, 'comparable published measurement')} ({self.regime})"
        return f"roofline estimate: no comparable measurement ({self.regime})"

    @computed_field
    @property
    def short(self) -> str:
        """'±12% (9 measurements)' or 'no comparable measurement'."""
        if not self.points:
            return "no comparable measurement"
        return f"±{self.band:.0%} ({self.points} measurement{'s' if self.points > 1 else ''})"

    @computed_field
    @property
    def text(self) -> str:
        if not self.points:
            wider = (
                f"; across other GPUs and formats this phase is typically within ±{self.phase_band:.0%} "
                f"({self.phase_points} measurements)"
                if self.phase_points
                else ""
            )
            return f"No comparable measurement ({self.regime}): a roofline estimate{wider}."
        tail = ""
        if self.bias is not None and abs(self.bias) >= 0.1:
            way = "optimistic (faster than measured)" if self.bias > 0 else "pessimistic (slower than measured)"
            tail = f"; there the model has been {way} by {abs(self.bias):.0%} at the median"
        return (
            f"Typically within ±{self.band:.0%} of {self.points} comparable published measurement"
            f"{'s' if self.points > 1 else ''} ({self.regime}){tail}."
        )

    def to_dict(self) -> dict:
        return self.model_dump()
