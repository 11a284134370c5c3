"""Number formats with their real storage cost, scale metadata included.

``bits_per_value`` is what one stored value costs on average once block scales and zero points
are counted. ``math`` is the tensor-core format the matmuls run in when this format holds the
weights (weight-only formats such as GPTQ int4 or NF4 dequantise and compute in bf16).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class NumberFormat:
    name: str
    label: str
    bits_per_value: float
    math: str  # one of "fp32", "bf16", "fp8", "int8", "fp4"
    note: str
    lower_bound: bool = False

    @property
    def bytes_per_value(self) -> float:
        return self.bits_per_value / 8.0

    @property
    def family(self) -> str:
        """The class calibration and efficiency tables group formats by: 16-bit (and FP32), FP8, FP4, or 8/4-bit
        integer (weight-only GPTQ/AWQ/NF4 and INT8), whose kernels differ from the floating-point ones."""
        if self.bits_per_value >= 16:
            return "16-bit"
        if self.name.startswith(("int", "nf4")):
            return "8/4-bit integer"
        return {"fp8": "FP8", "fp4": "FP4"}.get(self.math, self.math.upper())


# Double-quantised NF4 (QLoRA paper, Dettmers et al. 2023): 4 bits + an 8-bit absmax per 64 values
# + one fp32 second-level scale per 256 blocks = 4 + 8/64 + 32/(64*256) bits.
_NF4_DQ_BITS = 4 + 8 / 64 + 32 / (64 * 256)

FORMATS: dict[str, NumberFormat] = {
    f.name: f
    for f in [
        NumberFormat("fp32", "FP32", 32, "fp32", "4 bytes per value"),
        NumberFormat("bf16", "BF16", 16, "bf16", "2 bytes per value"),
        NumberFormat("fp16", "FP16", 16, "bf16", "2 bytes per value; same tensor-core peak as BF16"),
        NumberFormat("fp8", "FP8 (E4M3)", 8, "fp8", "1 byte per value; one scale per tensor (negligible)"),
        NumberFormat("int8", "INT8", 8, "int8", "1 byte per value; per-channel scales negligible"),
        NumberFormat(
            "int4-g128",
            "INT4 GPTQ/AWQ group 128",
            4 + 16 / 128 + 4 / 128,
            "bf16",
            "4-bit values + one FP16 scale and a packed 4-bit zero point per group of 128 "
            "(about 4.16 bits); weight-only, matmuls run in BF16",
        ),
        NumberFormat(
            "nf4",
            "NF4 (bitsandbytes, block 64)",
            4.5,
            "bf16",
            "4 bits + one FP32 absmax per 64 values = 4.5 bits; weight-only",
        ),
        NumberFormat(
            "nf4-dq",
            "NF4 + double quantisation (QLoRA)",
            _NF4_DQ_BITS,
            "bf16",
            "absmax scales themselves quantised to 8 bits: about 4.127 bits; weight-only",
        ),
        NumberFormat("mxfp4", "MXFP4", 4.25, "fp4", "4-bit E2M1 + one 8-bit E8M0 scale per 32 values"),
        NumberFormat("nvfp4", "NVFP4", 4.5, "fp4", "4-bit E2M1 + one FP8 E4M3 scale per 16 values"),
        NumberFormat(
            "int4-ideal",
            "Ideal packed 4-bit (lower bound)",
            4,
            "bf16",
            "exactly 0.5 byte per value with no scales: a lower bound no real 4-bit format reaches",
            lower_bound=True,
        ),
    ]
}

WEIGHT_FORMATS = list(FORMATS)
KV_FORMATS = ["fp32", "bf16", "fp16", "fp8", "int8", "nvfp4"]


def get_format(name: str) -> NumberFormat:
    key = name.strip().lower()
    if key not in FORMATS:
        raise ValueError(f"unknown number format {name!r}; allowed: {', '.join(FORMATS)}")
    return FORMATS[key]
