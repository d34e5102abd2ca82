import torch
import triton
import triton.language as tl


@triton.jit
def _to_dtype(x, dtype: tl.constexpr):
    """Round fp32 to ``dtype`` to nearest-even. For bfloat16 the rounding is done on the bits, so the result
    is the same on every backend (the CPU interpreter truncates when it narrows to bfloat16)."""
    if dtype == tl.bfloat16:
        bits = x.to(tl.uint32, bitcast=True)
        bits = bits + 0x7FFF + ((bits >> 16) & 1)
        return (bits & 0xFFFF0000).to(tl.float32, bitcast=True).to(tl.bfloat16)
    return x.to(dtype)


@triton.jit
def fused_add_rms_norm_kernel(input_ptr, residual_ptr, weight_ptr, n_cols, stride_in, stride_res, eps,
                              BLOCK_N: tl.constexpr):
    """residual <- dtype(input + residual); input <- dtype(z * rsqrt(mean(z^2) + eps)) * weight."""
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_N)
    m = offs < n_cols
    a = tl.load(input_ptr + row * stride_in + offs, mask=m, other=0.0).to(tl.float32)
    r = tl.load(residual_ptr + row * stride_res + offs, mask=m, other=0.0).to(tl.float32)
    z = _to_dtype(a + r, residual_ptr.dtype.element_ty)
    tl.store(residual_ptr + row * stride_res + offs, z, mask=m)
    zf = z.to(tl.float32)
    inv = 1.0 / tl.sqrt(tl.sum(zf * zf, axis=0) / n_cols + eps)
    h = _to_dtype(zf * inv, input_ptr.dtype.element_ty).to(tl.float32)
    w = tl.load(weight_ptr + offs, mask=m, other=0.0).to(tl.float32)
    tl.store(input_ptr + row * stride_in + offs, _to_dtype(h * w, input_ptr.dtype.element_ty), mask=m)


def fused_add_rms_norm(input, residual, weight, epsilon):
    n_cols = input.shape[-1]
    rows = input.numel() // n_cols if n_cols else 0
    if rows == 0:
        return
    x = input.view(rows, n_cols)
    res = residual.view(rows, n_cols)
    fused_add_rms_norm_kernel[(rows,)](x, res, weight, n_cols, x.stride(0), res.stride(0), epsilon,
                                       BLOCK_N=triton.next_power_of_2(n_cols))
