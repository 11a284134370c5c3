"""Calibrate to your deployment, as a typed report (``calibrate --from FILE --json``, the Performance page's
"Calibrate to your deployment" section): the file as read, every bad run's issue, each run predicted vs measured,
the median errors before and after the fit (in-sample and held out), and the fitted profile.

Errors are relative, (predicted - measured) / measured; the medians are of their absolute values.
"""

from __future__ import annotations

from pydantic import Field

from ..common.text import pct
from ..perf.deployment_fit import METRICS, DeploymentFit
from ..results.base import _Report
from ..scenario.profile import DeploymentProfile

METRIC_LABELS = {"ttft": "TTFT (ms)", "tpot": "TPOT (ms)", "output_tokens_per_s": "output tokens/s"}
WHICH = {"before": "engine defaults", "fitted": "fitted, in-sample", "held_out": "fitted, run held out"}


class DeploymentCalibration(_Report):
    """One benchmark file calibrated: None for ``fit`` and ``profile`` when the file has a bad run (then nothing
    is fitted and nothing changes) or no run."""

    name: str = Field(description="the file's name")
    file_sha256: str
    file_format: str = Field(description="vllm json, json lines (vLLM --append-result, SGLang), genai-perf json/csv")
    runs_read: int
    issues: list[str] = Field(description="every bad run: 'run N, field: what is allowed'")
    notes: list[str] = Field(description="what was assumed (the model from the file's model_id, a default GPU)")
    fit: DeploymentFit | None = None
    profile: DeploymentProfile | None = None

    @property
    def ok(self) -> bool:
        return self.fit is not None

    def run_rows(self) -> list[dict]:
        """One row per run and metric: measured, predicted before / fitted / held out, and their errors in %."""
        out = []
        for r in self.fit.runs if self.fit else []:
            for m in METRICS:
                meas = r.measured[m]
                if meas is None:
                    continue
                row = {"run": r.line, "load": r.label, "tokens in/out": f"{r.input_tokens}/{r.output_tokens}"}
                row |= {"metric": METRIC_LABELS[m], "measured": meas}
                for which in WHICH:
                    pred = getattr(r, which)[m]
                    row[which] = pred
                    row[f"{which} error %"] = None if pred is None else 100 * (pred - meas) / meas
                out.append(row)
        return out

    def error_rows(self) -> list[dict]:
        """Per metric: the median |error| in % with the engine's defaults, fitted in-sample, and held out."""
        if not self.fit:
            return []
        e = self.fit.errors
        pc = {w: {m: None if e[w][m] is None else 100 * e[w][m] for m in METRICS} for w in WHICH}
        return [{"metric": METRIC_LABELS[m], **{f"{WHICH[w]} %": pc[w][m] for w in WHICH}} for m in METRICS]

    def summary(self) -> str:
        """One sentence: what was fitted and how much better it predicts the runs it never saw."""
        if not self.fit or not self.profile:
            return f"{self.name}: {len(self.issues)} bad run(s); nothing fitted."
        e = self.fit.errors
        held = ", ".join(
            f"{METRIC_LABELS[m].split(' (')[0]} {pct(e['before'][m])} -> {pct(e['held_out'][m])}"
            for m in METRICS
            if e["before"][m] is not None and e["held_out"][m] is not None
        )
        return (
            f"{self.profile.summary()}. Median error, engine defaults -> fitted with each run held out: "
            f"{held or 'no run held out (one run)'}."
        )
