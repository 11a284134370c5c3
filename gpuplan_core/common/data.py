"""Where the bundled data lives, and how names are matched against it."""

from __future__ import annotations

import re
from pathlib import Path

DATA_DIR = Path(__file__).resolve().parents[2] / "data"


def norm_name(name: str) -> str:
    s = re.sub(r"[^a-z0-9]", "", name.lower())
    for noise in ("nvidia", "tesla", "geforce", "hbm3e", "hbm3", "hbm2e", "hbm2", "gddr6", "gddr7"):
        s = s.replace(noise, "")
    return s
