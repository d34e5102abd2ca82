# BUG: normal-range rounding adds half an ulp (0x80000) and truncates, i.e. rounds ties away from zero instead of to even, so exact ties (frequent for fp16/bf16 inputs, e.g. 1.0625 or 9.0) get the next code up; exposed by the [128,512] public cases (and any large random input), while the tiny [1,32] case can pass by luck.
# SPDX-License-Identifier: Apache-2.0
"""Triton implementation of ``convert_fp8``: fp16/bf16 -> raw e4m3 (fn) bytes.

output[...] = bits(e4m3fn(float(input[...]) / scale))

The fp32 -> e4m3 rounding is done with integer bit manipulation so that the
result is round-to-nearest-even with saturation to +-448 on every backend,
independent of which conversion instruction the compiler would pick.
"""

import torch
import triton
import triton.language as tl

_MAX_DIMS = 4
_E4M3_MAX = 448.0


@triton.jit
def _fp32_to_e4m3fn_bits(y):
    """Round a fp32 tensor to e4m3fn (RNE, saturating) and return the raw bytes
    as int32 in [0, 255]. NaN maps to 0x7F with the sign of the input."""
    is_nan = y != y
    y = tl.minimum(tl.maximum(y, -448.0), 448.0)

    bits = y.to(tl.int32, bitcast=True)
    sign = (bits >> 24) & 0x80
    mag = bits & 0x7FFFFFFF

    # Normal range (|y| >= 2^-6): round the 20 dropped mantissa bits to
    # nearest, then rebias the exponent from 127 to 7 (127 - 7 = 120).
    normal = ((mag + 0x80000) >> 20) - (120 << 3)

    # Subnormal range (|y| < 2^-6): e4m3 subnormals are multiples of 2^-9.
    # Adding 2^14 makes the fp32 ulp exactly 2^-9, so the fp32 adder performs
    # the RNE rounding; the low mantissa bits are then the e4m3 code.
    ay = mag.to(tl.float32, bitcast=True)
    sub = (ay + 16384.0).to(tl.int32, bitcast=True) - 0x46800000

    res = tl.where(mag < 0x3C800000, sub, normal)
    res = tl.where(is_nan, 0x7F, res)
    return res | sign


@triton.jit
def _convert_fp8_kernel(
    out_ptr,
    in_ptr,
    scale,
    numel,
    size1,
    size2,
    size3,
    in_stride0,
    in_stride1,
    in_stride2,
    in_stride3,
    out_stride0,
    out_stride1,
    out_stride2,
    out_stride3,
    BLOCK_SIZE: tl.constexpr,
):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE).to(tl.int64)
    mask = offs < numel

    # Unravel the flat (logical, row-major) index into up to 4 coordinates.
    i3 = offs % size3
    rem = offs // size3
    i2 = rem % size2
    rem = rem // size2
    i1 = rem % size1
    i0 = rem // size1

    in_off = i0 * in_stride0 + i1 * in_stride1 + i2 * in_stride2 + i3 * in_stride3
    out_off = (i0 * out_stride0 + i1 * out_stride1 + i2 * out_stride2 +
               i3 * out_stride3)

    x = tl.load(in_ptr + in_off, mask=mask, other=0.0).to(tl.float32)
    # True IEEE fp32 division (plain `/` may lower to an approximate divide).
    # (div_rn does not broadcast, so splat the scalar scale first.)
    scale_vec = tl.zeros([BLOCK_SIZE], dtype=tl.float32) + scale
    y = tl.math.div_rn(x, scale_vec)
    q = _fp32_to_e4m3fn_bits(y)
    tl.store(out_ptr + out_off, q.to(tl.uint8), mask=mask)


def _coalesce_dims(shape, strides_a, strides_b):
    """Drop size-1 dims and merge adjacent dims that are jointly contiguous in
    both tensors. Returns (shape, strides_a, strides_b) lists."""
    dims = [(s, a, b) for s, a, b in zip(shape, strides_a, strides_b) if s != 1]
    if not dims:
        return [1], [0], [0]
    merged = [list(dims[-1])]
    for s, a, b in reversed(dims[:-1]):
        inner = merged[0]
        if a == inner[1] * inner[0] and b == inner[2] * inner[0]:
            inner[0] *= s
        else:
            merged.insert(0, [s, a, b])
    return ([d[0] for d in merged], [d[1] for d in merged],
            [d[2] for d in merged])


def convert_fp8(output: torch.Tensor,
                input: torch.Tensor,
                scale: float = 1.0,
                kv_dtype: str = "fp8") -> None:
    if kv_dtype not in ("fp8", "fp8_e4m3"):
        raise ValueError(f"Unsupported kv_dtype for convert_fp8: {kv_dtype}")
    if input.dtype not in (torch.float16, torch.bfloat16, torch.float32):
        raise ValueError(f"Unsupported input dtype: {input.dtype}")
    assert output.shape == input.shape, "output must have input's shape"
    if output.dtype != torch.uint8:
        # e.g. a torch.float8_e4m3fn buffer: write its raw bytes.
        assert output.element_size() == 1
        output = output.view(torch.uint8)

    shape, in_strides, out_strides = _coalesce_dims(
        list(input.shape), list(input.stride()), list(output.stride()))
    if len(shape) > _MAX_DIMS:
        # Rare high-rank layouts that cannot be merged down to 4 dims: peel
        # off the leading dim and launch on each (view) slice.
        for i in range(input.shape[0]):
            convert_fp8(output[i], input[i], scale, kv_dtype)
        return None
    numel = input.numel()
    if numel == 0:
        shape, in_strides, out_strides = [1], [0], [0]
    pad = _MAX_DIMS - len(shape)
    shape = [1] * pad + shape
    in_strides = [0] * pad + in_strides
    out_strides = [0] * pad + out_strides

    BLOCK_SIZE = 1024
    grid = (max(1, triton.cdiv(numel, BLOCK_SIZE)), )
    _convert_fp8_kernel[grid](
        output,
        input,
        float(scale),
        numel,
        shape[1],
        shape[2],
        shape[3],
        in_strides[0],
        in_strides[1],
        in_strides[2],
        in_strides[3],
        out_strides[0],
        out_strides[1],
        out_strides[2],
        out_strides[3],
        BLOCK_SIZE=BLOCK_SIZE,
        num_warps=4,
    )
    return None
