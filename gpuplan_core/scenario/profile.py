"""A deployment profile: the few constants fitted to one team's own benchmark file (perf/deployment_fit.py),
with the file's hash and name, and the setup they were fitted on. Applied to a scenario it sets the scenario's
``request_in_s`` and ``decode_time_factor`` (scenario/deployment.py RuntimeAssumptions); a link names it by its
hash (``profile``), and the scenario file carries it whole.
"""

from __future__ import annotations

import hashlib
import json

from pydantic import BaseModel, ConfigDict, Field

PROFILE_KIND = "gpuplan-deployment-profile"


class DeploymentProfile(BaseModel):
    """The constants one deployment's runs identify, and where they come from."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: str = PROFILE_KIND
    name: str = Field(max_length=200, description="the benchmark file's name")
    file_sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="sha256 of the benchmark file's bytes")
    file_format: str = Field(description="the format the file was read as (vllm json, json lines, genai-perf ...)")
    model: str = Field(description="the model preset the runs were replayed with")
    gpu: str
    tp: int = Field(ge=1)
    engine: str
    runs: int = Field(ge=1, description="runs the constants were fitted on")
    request_in_s: float = Field(ge=0, le=10, description="fixed cost per request before its first token, seconds")
    decode_time_factor: float = Field(
        1.0, ge=0.2, le=5, description="measured over predicted decode step time (1: not identified by the file)"
    )

    def constants(self) -> dict[str, float]:
        """The Scenario fields (RuntimeAssumptions) the profile sets."""
        return {"request_in_s": self.request_in_s, "decode_time_factor": self.decode_time_factor}

    def text(self) -> str:
        """The profile as the JSON text kept on the server (its hash is the profile's name in a link)."""
        return json.dumps(self.model_dump(), indent=2, sort_keys=True)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text().encode()).hexdigest()

    def summary(self) -> str:
        factor = f", decode steps x {self.decode_time_factor:.3f}" if self.decode_time_factor != 1 else ""
        return (
            f"{self.name}: {self.request_in_s * 1e3:.1f} ms per request{factor} ({self.runs} runs of {self.model} on "
            f"{self.tp} x {self.gpu}, {self.engine})"
        )


def read_profile(text: str | bytes) -> DeploymentProfile:
    """A profile from its JSON text (ValueError, naming the field, when it is not one)."""
    data = json.loads(text)
    if not isinstance(data, dict) or data.get("kind") != PROFILE_KIND:
        raise ValueError(f'not a deployment profile (missing "kind": "{PROFILE_KIND}")')
    return DeploymentProfile(**data)
