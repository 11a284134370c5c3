"""hardware/catalog.py: the GPU rows hold the seed table's dense figures (DOMAIN.md), names resolve through their
aliases, and the unit properties convert once (labels read as GiB, bandwidth in decimal GB/s)."""

import pytest

from gpuplan_core.hardware.catalog import (
    GPU,
    catalog_gpus,
    get_gpu,
    load_gpus,
    moe_efficiency_factors,
    resolve_gpu_name,
    weight_mbu_factors,
)

# DOMAIN.md's hardware table (seed spec table, dense): VRAM label GB, bandwidth GB/s, FP16/BF16 and FP8 TFLOPS, TDP W
DOMAIN_TABLE = {
    "B200": (180, 8000, 2250, 4500, 1000),
    "H200": (141, 4800, 989, 1979, 700),
    "H100-SXM": (80, 3350, 989, 1979, 700),
    "L40S": (48, 864, 362.05, 733, 350),
    "L4": (24, 300, 121, 242, 72),
    "RTX-PRO-6000": (96, 1792, 503.8, 1007.6, 600),
}


@pytest.mark.parametrize("gid", DOMAIN_TABLE)
def test_rows_hold_the_seed_table_s_dense_figures(gid):
    g = get_gpu(gid)
    assert (g.vram_nominal_gb, g.bandwidth_gb_s, g.bf16_dense_tflops, g.fp8_dense_tflops, g.tdp_w) == DOMAIN_TABLE[gid]
    assert g.is_gpu and g.vram_usable_gib < g.vram_nominal_gb


def test_h100_and_h200_share_compute_and_differ_in_memory():
    h100, h200 = get_gpu("H100"), get_gpu("H200")
    assert (h100.bf16_dense_tflops, h100.fp8_dense_tflops) == (h200.bf16_dense_tflops, h200.fp8_dense_tflops)
    assert h200.vram_nominal_gb > h100.vram_nominal_gb and h200.bandwidth_gb_s > h100.bandwidth_gb_s


def test_units_labels_are_binary_bandwidth_is_decimal():
    g = get_gpu("H100 SXM")
    assert g.vram_nominal_bytes == 80 * 2**30 == 85_899_345_920  # an "80 GB" H100 has 80 GiB of HBM
    assert g.vram_usable_bytes == pytest.approx(79.19 * 2**30)  # torch reports 79.19 GiB
    assert g.bandwidth_bytes_per_s == 3350 * 10**9
    assert g.link_bandwidth_bytes_per_s == 450 * 10**9 and get_gpu("L4").link_bandwidth_bytes_per_s is None
    # ridge point at dense BF16: 989e12 FLOP/s / 3.35e12 B/s = 295.2 FLOP per byte
    assert g.ridge_flops_per_byte == pytest.approx(989e12 / 3350e9, rel=1e-12)


@pytest.mark.parametrize(
    "spelling, gid",
    [
        ("H100", "H100-SXM"),
        ("h100 sxm5 80gb", "H100-SXM"),
        ("NVIDIA H100 80GB HBM3", "H100-SXM"),
        ("A100-40GB", "A100-40GB"),
        ("RTX PRO 6000 Blackwell", "RTX-PRO-6000"),
        ("Tesla V100-SXM2-32GB", "V100-32GB"),
        ("AMD Instinct MI300X", "MI300X"),
    ],
)
def test_spellings_resolve_to_one_row(spelling, gid):
    assert resolve_gpu_name(spelling) == gid and get_gpu(spelling).gpu == gid


def test_an_unknown_gpu_names_the_field_and_the_allowed_ids():
    assert resolve_gpu_name("H900") is None and resolve_gpu_name("") is None
    with pytest.raises(ValueError) as exc:
        get_gpu("H900")
    msg = str(exc.value)
    assert msg.startswith("gpu: unknown GPU 'H900'; allowed: B200, H200, H100-SXM,")
    assert msg.endswith("(and their usual aliases)") and all(g.gpu in msg for g in load_gpus())


def test_every_alias_is_unique_across_rows():
    from gpuplan_core.common.data import norm_name

    rows = [{norm_name(k) for k in (g.gpu, *g.aliases)} for g in load_gpus()]
    assert sum(len(r) for r in rows) == len(set().union(*rows))  # no spelling reaches two rows


@pytest.mark.parametrize(
    "gid, math, expected",
    [
        ("H100", "bf16", (989e12, "bf16")),
        ("H100", "fp8", (1979e12, "fp8")),
        ("H100", "fp4", (1979e12, "fp8")),  # no FP4 on Hopper: the best below, FP8
        ("B200", "fp4", (9000e12, "fp4")),
        ("A100-40GB", "fp8", (312e12, "bf16")),  # no FP8 tensor cores on Ampere
        ("A100-40GB", "int8", (624e12, "int8")),
        ("V100-32GB", "int8", (125e12, "bf16")),  # Volta has no INT8 tensor-core figure
        ("H100", "fp32", (989e12 / 2, "tf32")),  # TF32 on tensor cores: half the BF16 peak
        ("V100-32GB", "fp32", (15.7e12, "fp32")),  # no TF32: CUDA cores
        ("H100", "fp64", (989e12, "bf16")),  # an unknown math format runs as BF16
    ],
)
def test_dense_peak_falls_back_to_the_best_supported_format(gid, math, expected):
    flops, used = get_gpu(gid).dense_peak_flops(math)
    assert (pytest.approx(flops, rel=1e-12), used) == expected


def _gpu(**over) -> GPU:
    base = dict(
        gpu="X",
        family="X",
        variant="",
        architecture="Hopper",
        vram_nominal_gb=80,
        vram_usable_gib=79,
        vram_usable_source="test",
        memory_type="HBM3",
        bandwidth_gb_s=3000,
        bf16_dense_tflops=1000,
        sources="test",
    )
    return GPU(**{**base, **over})


def test_peer_link_by_link_type():
    assert get_gpu("H100").peer_link(8) == ("nvlink", 450e9)  # NVSwitch: the whole link to any peer
    assert get_gpu("H100-PCIe").peer_link(2) == ("pcie", 64e9)  # a PCIe row with its bandwidth
    assert get_gpu("L4").peer_link(4) == ("pcie", None)  # none stated: the caller's default applies
    assert get_gpu("TPU-v5e").peer_link(8) == ("nvlink", 200e9)  # ICI: a scale-up link per direction
    # Gaudi 3's RoCE ports are a mesh like Infinity Fabric: 525 GB/s over 7 peers, 75 GB/s to each
    assert get_gpu("Gaudi3").peer_link(4) == ("nvlink", pytest.approx(3 * 525e9 / 7))
    # an empty link type: NVLink where a link bandwidth is given, else PCIe
    assert _gpu(link_gb_s_per_direction=300).peer_link(8) == ("nvlink", 300e9)
    assert _gpu().peer_link(8) == ("pcie", None)


def test_a_row_is_validated_and_frozen():
    with pytest.raises(ValueError, match="bandwidth_gb_s"):
        _gpu(bandwidth_gb_s=0)
    with pytest.raises(ValueError, match="link_type"):
        _gpu(link_type="InfiniBand")
    with pytest.raises(ValueError, match="extra_column"):
        _gpu(extra_column=1)
    assert _gpu(kind="").kind == "gpu" and _gpu(kind=None).kind == "gpu"  # an empty kind column is a GPU
    with pytest.raises(ValueError):
        _gpu().bandwidth_gb_s = 1


def test_label_is_family_and_variant_unless_the_id_is_the_family():
    assert get_gpu("H100").label == "H100 SXM" and get_gpu("A100-40GB").label == "A100 SXM 40GB"
    assert get_gpu("B200").label == "B200"  # family B200 is the id: the variant is not repeated
    assert _gpu(gpu="Z", family="Z", variant="PCIe").label == "Z"


def test_load_gpus_reads_a_csv_of_its_own(tmp_path):
    csv = tmp_path / "gpus.csv"
    csv.write_text(
        "gpu,family,variant,architecture,aliases,vram_nominal_gb,vram_usable_gib,vram_usable_source,memory_type,"
        "bandwidth_gb_s,bf16_dense_tflops,fp8_dense_tflops,link_type,sources,notes,kind\n"
        "Z1,Z,One,Hopper,zone;z-1,24,22.5,test,GDDR6,500,100,,,a paper,,\n"
    )
    (z,) = load_gpus(str(csv))
    assert (z.aliases, z.fp8_dense_tflops, z.link_type, z.notes, z.kind) == (("zone", "z-1"), None, "", "", "gpu")
    assert (z.vram_nominal_gb, z.bandwidth_gb_s) == (24.0, 500.0)
    assert get_gpu("ZONE", str(csv)).gpu == "Z1" and resolve_gpu_name("z 1", str(csv)) == "Z1"


def test_the_search_set_is_the_gpus_unless_accelerators_are_allowed():
    gpus, everything = catalog_gpus(), catalog_gpus(allow_accelerators=True)
    assert len(everything) == len(load_gpus()) == 28 and len(gpus) == 22  # 6 accelerators: 3 TPUs, 2 AWS, Gaudi 3
    assert all(g.is_gpu for g in gpus) and everything == load_gpus()


def test_efficiency_factors_from_the_measurements_table():
    # data/efficiency.csv: weight-only INT8 decode on A100 reads 8-bit weights at 0.85 of 16-bit; W4A16 on Ada at 1.0
    assert weight_mbu_factors() == {("Ampere", "8/4-bit integer"): 0.85, ("Ada", "8/4-bit integer"): 1.0}
    moe = moe_efficiency_factors()
    assert (moe[("Hopper", "FP8")], moe[("CDNA3", "FP8")], moe[("Blackwell", "FP4")]) == (0.5, 0.3, 1.0)
    assert ("Hopper", "16-bit") not in moe  # no MoE measurement pins it: 1 (perf/efficiency.py)
