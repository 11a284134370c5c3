"""common/data.py: where the bundled data lives, and how a GPU's spelling is reduced to match the catalog."""

import pytest

from gpuplan_core.common.data import DATA_DIR, norm_name


def test_the_data_directory_holds_the_bundled_tables():
    assert DATA_DIR.name == "data" and DATA_DIR.is_absolute()
    for name in ("gpus.csv", "models.json", "pricing.csv", "regions.csv", "efficiency.csv"):
        assert (DATA_DIR / name).is_file(), name


@pytest.mark.parametrize(
    "spelling, key",
    [
        ("H100 SXM", "h100sxm"),  # case and spaces
        ("H100-SXM5-80GB", "h100sxm580gb"),  # punctuation
        ("NVIDIA H100 80GB HBM3", "h10080gb"),  # vendor name and memory type are noise
        ("Tesla V100-SXM2-32GB", "v100sxm232gb"),
        ("GeForce RTX 4090 GDDR6X", "rtx4090x"),  # "gddr6" is removed before the "x" is reached
        ("A100 40GB HBM2e", "a10040gb"),  # "hbm2e" goes before "hbm2" would leave an "e"
        ("RTX PRO 6000 Blackwell", "rtxpro6000blackwell"),
        ("", ""),
    ],
)
def test_norm_name_keeps_letters_and_digits_less_the_noise(spelling, key):
    assert norm_name(spelling) == key


def test_spellings_of_one_gpu_meet():
    assert norm_name("nvidia-h200") == norm_name("H200") == norm_name("h200 HBM3e") == "h200"
