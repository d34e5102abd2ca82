# SPDX-License-Identifier: Apache-2.0
# Triton port of the CUTLASS w4a8 scale packing (cutlass_pack_scale_fp8).
#
# Every e4m3 group scale s becomes an 8-entry lookup table
#     [e4m3(-8 s), e4m3(-7 s), ..., e4m3(-2 s), -s]
# which the w4a8 mainloop indexes with the (signed) 4-bit weight.
#
# The fp8 <-> fp32 conversions are done with explicit bit manipulation so the
# rounding (round-to-nearest-even, saturating to +-448 like torch's cast) does
# not depend on the backend's cvt instructions.
import torch
import triton
import triton.language as tl

_E4M3_MAX_BITS = 0x7E  # 448.0
_E4M3_NAN_BITS = 0x7F


@triton.jit
def _e4m3_bits_to_fp32(b):
    # b: int32 tensor holding one e4m3fn byte per lane
    sign = (b >> 7) & 1
    exp = (b >> 3) & 0xF
    man = b & 0x7
    # normal numbers: rebias 7 -> 127
    normal_bits = (sign << 31) | ((exp + 120) << 23) | (man << 20)
    normal = normal_bits.to(tl.float32, bitcast=True)
    # subnormals: man * 2^-9
    sub = man.to(tl.float32) * 0.001953125
    # multiply (not negate) so that 0x80 decodes to -0.0
    sub = sub * (1 - 2 * sign).to(tl.float32)
    val = tl.where(exp == 0, sub, normal)
    is_nan = (exp == 0xF) & (man == 0x7)
    return tl.where(is_nan, float("nan"), val)


@triton.jit
def _fp32_to_e4m3_bits(x):
    # round-to-nearest-even fp32 -> e4m3fn, saturating finite overflow to 448
    bits = x.to(tl.int32, bitcast=True)
    sign = (bits >> 24) & 0x80
    abs_bits = bits & 0x7FFFFFFF
    ax = abs_bits.to(tl.float32, bitcast=True)

    # subnormal path: let the fp32 adder do the rounding at 2^-9 granularity
    # (2^14 has an ulp of 2^-9)
    denorm = ax + 16384.0
    sub_res = denorm.to(tl.int32, bitcast=True) - (141 << 23)

    # normal path: round mantissa from 23 to 3 bits, rebias exponent 127 -> 7
    mant_odd = (abs_bits >> 20) & 1
    rounded = abs_bits + (((7 - 127) << 23) + 0x7FFFF) + mant_odd
    norm_res = rounded >> 20

    res = tl.where(abs_bits < (121 << 23), sub_res, norm_res)
    # 464 and above (incl. inf) saturate; 448 <= x < 464 already rounds to 0x7E
    res = tl.where(ax >= 464.0, 0x7E, res)
    res = tl.where(ax != ax, 0x7F, res)
    return (res | sign) & 0xFF


@triton.jit
def _pack_scale_fp8_kernel(
    scale_ptr,  # uint8 view of the e4m3 scales, flat
    out_ptr,  # uint8 view of the e4m3 output, flat [numel * 8]
    numel,
    LUT_SIZE: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
):
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < numel
    s_bits = tl.load(scale_ptr + offs, mask=mask, other=0).to(tl.int32)
    s = _e4m3_bits_to_fp32(s_bits)

    j = tl.arange(0, LUT_SIZE)
    # multipliers -8, -7, ..., -1  (the last one is handled as a sign flip)
    mult = (j - LUT_SIZE).to(tl.float32)
    prod = s[:, None] * mult[None, :]
    lut = _fp32_to_e4m3_bits(prod)
    neg = (s_bits ^ 0x80)[:, None] + tl.zeros_like(lut)
    lut = tl.where(j[None, :] == LUT_SIZE - 1, neg, lut)

    out_offs = offs[:, None] * LUT_SIZE + j[None, :]
    tl.store(out_ptr + out_offs, lut.to(tl.uint8), mask=mask[:, None])


def cutlass_pack_scale_fp8(scales: torch.Tensor) -> torch.Tensor:
    assert scales.dtype == torch.float8_e4m3fn
    scales = scales.contiguous()
    numel = scales.numel()
    out = torch.empty(numel * 8, dtype=torch.float8_e4m3fn, device=scales.device)
    if numel == 0:
        # nothing to pack, but keep the launch so the op is always a kernel call
        _pack_scale_fp8_kernel[(1,)](
            scales.view(torch.uint8).reshape(-1), out.view(torch.uint8), 0,
            LUT_SIZE=8, BLOCK_SIZE=16)
        return out
    BLOCK_SIZE = min(triton.next_power_of_2(numel), 1024)
    grid = (triton.cdiv(numel, BLOCK_SIZE),)
    _pack_scale_fp8_kernel[grid](
        scales.view(torch.uint8).reshape(-1),
        out.view(torch.uint8),
        numel,
        LUT_SIZE=8,
        BLOCK_SIZE=BLOCK_SIZE,
    )
    return out
