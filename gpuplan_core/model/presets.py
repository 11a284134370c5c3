"""The published models gpuplan knows exactly (data/models.json)."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from ..common.data import DATA_DIR, norm_name
from .arch import ModelArch


@lru_cache(maxsize=2)
def load_presets(path: str | None = None) -> dict[str, ModelArch]:
    data = json.loads(Path(path or DATA_DIR / "models.json").read_text())
    return {d["name"]: ModelArch(**d) for d in data["models"]}


def get_preset(name: str) -> ModelArch:
    presets = load_presets()
    for key, m in presets.items():
        if norm_name(key) == norm_name(name):
            return m
    raise ValueError(f"preset: unknown model {name!r}; allowed: {', '.join(presets)}")
