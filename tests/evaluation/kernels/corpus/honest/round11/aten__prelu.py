"""aten::prelu in Triton.

out[i] = x[i] if x[i] >= 0 else weight[c(i)] * x[i], where c(i) is the index of
element i along dim 1 (or 0 when weight holds a single value).

The kernel walks the output in row-major (contiguous) order and gathers the input
through its own strides, so transposed / sliced / expanded (stride 0) inputs are
read in place without a staging copy.
"""
import math

import torch
import triton
import triton.language as tl

_MAX_BLOCK = 4096


@triton.jit
def _unravel_offset(lin, shape, strides, RANK: tl.constexpr, CH_DIM: tl.constexpr):
    """Strided element offset of the row-major linear index `lin`, plus the
    coordinate along CH_DIM (0 when CH_DIM < 0)."""
    off = tl.zeros_like(lin)
    ch = tl.zeros_like(lin)
    rem = lin
    for d in tl.static_range(RANK - 1, -1, -1):
        size = shape[d]
        coord = rem % size
        rem = rem // size
        off += coord * strides[d]
        if d == CH_DIM:
            ch = coord
    return off, ch


@triton.heuristics({
    # a single weight -> no gather, no channel bookkeeping at all
    "PER_CHANNEL": lambda args: args["num_channels"] > 1,
    "BLOCK": lambda args: min(_MAX_BLOCK, triton.next_power_of_2(max(1, args["n_elements"]))),
})
@triton.jit(do_not_specialize=["n_elements", "w_stride"])
def _prelu_kernel(x_ptr, w_ptr, out_ptr, n_elements, num_channels, w_stride,
                  shape, x_strides, RANK: tl.constexpr,
                  PER_CHANNEL: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    lin = pid * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    mask = lin < n_elements
    if PER_CHANNEL:
        x_off, ch = _unravel_offset(lin, shape, x_strides, RANK, 1)
        w = tl.load(w_ptr + ch * w_stride, mask=mask, other=0.0)
    else:
        x_off, ch = _unravel_offset(lin, shape, x_strides, RANK, -1)
        w = tl.load(w_ptr)
    x = tl.load(x_ptr + x_off, mask=mask, other=0.0)
    xf = x.to(tl.float32) if x.dtype != tl.float64 else x
    y = tl.where(xf >= 0, xf, w.to(xf.dtype) * xf)
    tl.store(out_ptr + lin, y.to(out_ptr.dtype.element_ty), mask=mask)


@torch.inference_mode()
def prelu(self: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    shape = tuple(self.shape)
    n = math.prod(shape)
    channels = shape[1] if len(shape) >= 2 else 1
    if weight.numel() not in (1, channels):
        raise RuntimeError(
            f"prelu: weight has {weight.numel()} elements, expected 1 or {channels}")

    # dense row-major output, built as a flat buffer and unflattened to the shape
    flat = torch.empty(n, dtype=self.dtype, device=self.device)
    out = flat.unflatten(0, shape) if shape else flat.view(())

    # a 0-d input is treated as a 1-element 1-d tensor
    k_shape = shape if shape else (1,)
    if n == 0:  # every lane is masked; keep the index math free of x % 0
        k_shape = tuple(max(1, s) for s in k_shape)
    k_strides = tuple(self.stride()) if shape else (1,)
    w = weight.reshape(-1) if weight.dim() != 1 else weight
    num_w = w.numel()
    w_stride = w.stride(0) if num_w > 1 else 0

    grid = lambda meta: (max(1, triton.cdiv(n, meta["BLOCK"])),)
    _prelu_kernel[grid](self, w, flat, n, num_w, w_stride,
                        k_shape, k_strides, RANK=len(k_shape))
    return out
