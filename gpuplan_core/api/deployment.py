"""Calibrate to your deployment: a benchmark file in, its runs replayed and the deployment's constants fitted
(perf/bench_files.py reads it, perf/deployment_fit.py fits it, report/deployment.py is what comes back)."""

from __future__ import annotations

import hashlib
from functools import lru_cache
from typing import NamedTuple

from ..common.data import norm_name
from ..hardware.catalog import get_gpu
from ..model.presets import get_preset, load_presets
from ..perf.bench_files import read_bench_file
from ..perf.deployment_fit import Deployment, fit_deployment
from ..perf.replica import DEFAULT_GPU
from ..report.deployment import DeploymentCalibration
from ..scenario.scenario import Scenario

MODEL_SUFFIXES = ("instruct", "chat", "hf", "base")  # a Hugging Face id's suffixes a preset's name leaves out


def preset_of(model_id: str) -> str | None:
    """The bundled preset a file's model id names ('meta-llama/Llama-3.1-8B-Instruct' -> 'Llama-3.1-8B'), if any."""
    name = norm_name(model_id.rsplit("/", 1)[-1])
    for suffix in MODEL_SUFFIXES:
        name = name.removesuffix(suffix)
    return next((p for p in load_presets() if norm_name(p) == name), None)


class _Defaults(NamedTuple):
    """What the scenario says of the setup (hashable, so that a file's calibration is remembered)."""

    model: str | None
    gpu: str | None
    tp: int
    engine: str
    weights_format: str
    kv_format: str

    @classmethod
    def of(cls, sc: Scenario) -> _Defaults:
        a, f = sc.assumptions, sc.formats
        return cls(
            sc.model_source.preset, sc.parallelism.gpu, sc.parallelism.tp, a.engine, f.weights_format, f.kv_format
        )


def _deployment(runs, given: _Defaults, scenario: _Defaults) -> tuple[Deployment, list[str]]:
    """The setup the runs are replayed on: what the caller gives, else the file's model id, else the scenario's."""
    notes = []
    model = given.model
    if model is None:
        ids = sorted({r.model_id for r in runs if r.model_id})
        found = [p for p in map(preset_of, ids) if p]
        if found:
            model = found[0]
            notes.append(f"Model {model}, from the file's model_id {ids[0]!r}.")
        elif scenario.model:
            model = scenario.model
            notes.append(f"The file names no bundled model: replayed as the scenario's {model}.")
        else:
            raise ValueError("calibrate: the file names no bundled model and the scenario has none: give a preset")
    gpu = given.gpu or scenario.gpu
    if gpu is None:
        gpu = DEFAULT_GPU
        notes.append(f"The file does not say the GPU: {gpu} assumed (give the GPU you ran on).")
    return Deployment(
        model=get_preset(model).name,
        gpu=get_gpu(gpu).gpu,
        tp=given.tp or scenario.tp,
        engine=given.engine or scenario.engine,
        weights_format=scenario.weights_format,
        kv_format=scenario.kv_format,
    ), notes


def calibrate_deployment(
    data: str | bytes,
    name: str = "benchmark file",
    sc: Scenario | None = None,
    *,
    model: str | None = None,
    gpu: str | None = None,
    tp: int | None = None,
    engine: str | None = None,
    load: tuple[str, float] | None = None,
) -> DeploymentCalibration:
    """Read a benchmark result file, replay its runs on the given (else the scenario's) model, GPU, tensor parallel
    and engine, and fit the deployment's constants. A file with a bad run is reported run by run and nothing is
    fitted. ValueError for a model or GPU gpuplan does not know."""
    given = _Defaults(model, gpu, tp or 0, engine or "", "", "")
    return _calibrate(data, name, given, _Defaults.of(sc or Scenario()), load)


@lru_cache(maxsize=16)
def _calibrate(
    data: str | bytes, name: str, given: _Defaults, scenario: _Defaults, load: tuple[str, float] | None
) -> DeploymentCalibration:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    report = read_bench_file(raw, load)
    base = {
        "name": name[:200],
        "file_sha256": hashlib.sha256(raw).hexdigest(),
        "file_format": report.kind,
        "runs_read": len(report.runs),
        "issues": [str(i) for i in report.errors],
    }
    if not report.ok:
        return DeploymentCalibration(**base, notes=[])
    dep, notes = _deployment(report.runs, given, scenario)
    fit = fit_deployment(report.runs, dep)
    profile = fit.profile(name, base["file_sha256"], report.kind)
    return DeploymentCalibration(**base, notes=notes, fit=fit, profile=profile)
