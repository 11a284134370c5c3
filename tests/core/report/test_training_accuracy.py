"""The training accuracy report quotes the core's own figures (README and Methodology read them from here)."""

from pathlib import Path

from gpuplan_core.memory.training_measurements import peak_summary
from gpuplan_core.report.training import training_accuracy

README = (Path(__file__).resolve().parents[3] / "README.md").read_text()


def test_the_report_is_the_core_figures():
    t = training_accuracy()
    assert t.memory_all.median_abs_error == peak_summary()["all (not paged)"]["median_abs_error"]
    assert t.speed_all.points >= 30 and 0 < t.speed_band < 0.5


def test_readme_states_the_figures_the_core_computes():
    t = training_accuracy()
    assert f"median |error| {t.memory_all.median_abs_error:.0%}" in README.replace("\n", " ")
    assert f"{t.speed_all.median_abs_error:.1%} off at the median" in README.replace("\n", " ")
