"""The speed results (results/perf.py): ``perf --json`` flattens its main GPU into the top level."""

from __future__ import annotations

from gpuplan_core.results.perf import NoFit, PerfReport


def test_perf_report_flattens_main(summary):
    main = NoFit(gpu="L4", notes=["needs 2 x L4"])
    other = NoFit(gpu="T4", notes=["needs 4 x T4"])
    d = PerfReport(**summary.model_dump(), main=main, gpus=[main, other]).model_dump()
    assert list(d) == [*summary.model_dump(), "gpu", "fits", "notes", "gpus"]
    assert (d["gpu"], d["fits"], d["notes"]) == ("L4", False, ["needs 2 x L4"])
    assert [g["gpu"] for g in d["gpus"]] == ["L4", "T4"]
    assert d["params_total"] == 8_030_261_248
