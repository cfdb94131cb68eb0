"""Peak rates of known GPUs, for the speed-of-light time of a problem.

The ceilings are the vendors' datasheet maxima (memory bandwidth; dense
16-bit tensor-core throughput, and plain FP32 throughput for float32 problems,
whose settings are pinned without TF32), deliberately generous: a kernel
faster than ``max(flops / peak_flops, bytes / peak_bandwidth)`` is impossible,
so an honest kernel must never come near it. Measured on an H200
(2026-10-28): 4.3 TB/s copy, 788 TFLOP/s bf16.

A problem declares ``kbench_bytes()`` for its float32 tensors; judged in a
16-bit dtype, its floating tensors are cast, so the bytes are scaled by the
element size (integer tensors counted as halved too: a lower bound, which
only makes the limit more generous).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Peak:
    bytes_per_second: float
    flops_per_second: float  # dense 16-bit tensor cores
    fp32_flops_per_second: float  # FP32 without TF32

    def flops_for(self, dtype: str) -> float:
        return self.fp32_flops_per_second if dtype == "float32" else self.flops_per_second


# Matched in order against the device name: more specific names first.
PEAKS: list[tuple[str, Peak]] = [
    ("H200", Peak(4.8e12, 989.4e12, 67.0e12)),
    ("H100 PCIe", Peak(2.0e12, 756.0e12, 51.2e12)),
    ("H100", Peak(3.35e12, 989.4e12, 67.0e12)),
    ("GH200", Peak(4.9e12, 989.4e12, 67.0e12)),
    ("A100", Peak(2.039e12, 312.0e12, 19.5e12)),
    ("L40S", Peak(0.864e12, 362.0e12, 91.6e12)),
    ("RTX 4090", Peak(1.008e12, 330.0e12, 82.6e12)),
]


def peak_for(device_name: str | None) -> Peak | None:
    for key, peak in PEAKS:
        if device_name and key in device_name:
            return peak
    return None


ELEMENT_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}


def speed_of_light_ms(device_name: str | None, flops: float | None, nbytes: float | None,
                      dtype: str = "float32") -> float | None:
    """The least time the work can take on this device in ``dtype``, or None if unknown."""
    peak = peak_for(device_name)
    if peak is None or (not flops and not nbytes):
        return None
    judged_bytes = (nbytes or 0.0) * ELEMENT_BYTES.get(dtype, 4) / 4
    return 1e3 * max((flops or 0.0) / peak.flops_for(dtype), judged_bytes / peak.bytes_per_second)
