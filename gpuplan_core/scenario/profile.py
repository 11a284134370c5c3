"""A deployment profile: the few constants fitted to one team's own benchmark file (perf/deployment_fit.py),
with the file's hash and name, and the setup they were fitted on. Applied to a scenario it sets the scenario's
``request_in_s`` and ``decode_time_factor`` (scenario/deployment.py RuntimeAssumptions); a link names it by its
hash (``profile``), and the scenario file carries it whole.
"""

from __future__ import annotations

import json

from pydantic import BaseModel, ConfigDict, Field

from ..pricing.store import EXPIRY_DAYS, PricingStore, StoredFile, StoreError, content_hash, server_store, valid_key
from .scenario import Scenario

PROFILE_KIND = "gpuplan-deployment-profile"
PROFILE_FIELDS = ("request_in_s", "decode_time_factor")  # the Scenario fields a profile sets (no widget of their own)


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
        return {f: getattr(self, f) for f in PROFILE_FIELDS}

    def text(self) -> str:
        """The profile as the JSON text kept on the server (its hash is the profile's name in a link)."""
        return json.dumps(self.model_dump(), indent=2, sort_keys=True)

    @property
    def sha256(self) -> str:
        """The hash the server keeps it under (pricing/store.py's content hash of its text)."""
        return content_hash(self.text())

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


# ---- kept on the server, named in a link -------------------------------------------------------------------------
# Profiles live in the pricing files' store (pricing/store.py: the same content hash, link digits, expiry and shared
# PostgreSQL), as kind "profile"; a link names one by ``profile=<key>``.
STORE_KIND = "profile"


def keep_profile(profile: DeploymentProfile, store: PricingStore | None = None) -> StoredFile:
    """Keep a profile on this server; returns it with the key a link carries (StoreError when it cannot)."""
    return (store or server_store()).put(profile.text(), profile.name, STORE_KIND)


def missing_profile_note(key: str) -> str:
    shown = key[:64]
    return (
        f"This link names the deployment profile {shown!r}, which this server does not hold (a profile unused for "
        f"{EXPIRY_DAYS} days expires; or it was fitted on another server): the answers are uncalibrated, with the "
        "engine's defaults. Upload the benchmark file under Performance, 'Calibrate to your deployment', to fit it."
    )


def find_profile(key: str, store: PricingStore | None = None) -> tuple[DeploymentProfile | None, str | None]:
    """The profile a link's ``profile`` names, or None and the note a page shows (none for an empty key)."""
    if not key:
        return None, None
    if not valid_key(key):
        return None, missing_profile_note(key)
    try:
        found = (store or server_store()).get(key)
    except StoreError as exc:
        return None, f"The deployment profile {key} cannot be read ({exc}): the answers are uncalibrated."
    if found is None or found.kind != STORE_KIND:
        return None, missing_profile_note(key)
    try:
        return read_profile(found.data), None
    except ValueError:
        return None, missing_profile_note(key)


def apply_profile(sc: Scenario, profile: DeploymentProfile) -> tuple[Scenario, list[str]]:
    """The scenario with the profile's constants, and a note naming it (and what differs from where it was
    fitted: a request cost carries to another GPU more readily than a decode factor)."""
    differs = [
        f"{what} {theirs} (the scenario: {ours})"
        for what, theirs, ours in (
            ("engine", profile.engine, sc.assumptions.engine),
            ("GPU", profile.gpu, sc.parallelism.gpu or "any"),
            ("model", profile.model, sc.model().name),
        )
        if theirs != ours
    ]
    note = f"Calibrated to your deployment: {profile.summary()}."
    if differs:
        note += " Fitted on another setup: " + "; ".join(differs) + "."
    return sc.with_(**profile.constants()), [note]
