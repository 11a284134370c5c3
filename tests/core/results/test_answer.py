"""The one answer's typed result (results/answer.py): a target check in words, printed as every headline prints a
latency (``common.text.ms``), the amount outside a target in seconds from 1 s on."""

import pytest

from gpuplan_core.results.answer import TargetCheck


@pytest.mark.parametrize(
    ("target", "value", "text"),
    [
        (2.0, 1.2, "within the 2 s first-token target (1,200 ms)"),
        (2.0, 2.517, "misses the 2 s first-token target by 517 ms"),
        (2.0, 3.5, "misses the 2 s first-token target by 1.5 s"),
        (0.1, 0.0443, "within the 100 ms first-token target (44.3 ms)"),
        (0.3, 0.45, "misses the 300 ms first-token target by 150 ms"),
        (0.1, 0.0369, "within the 100 ms first-token target (36.9 ms)"),  # as the headline: ms(0.0369), not "37 ms"
    ],
)
def test_target_text(target, value, text):
    assert TargetCheck(name="ttft", label="first-token", target=target, value=value, unit="s").text() == text
