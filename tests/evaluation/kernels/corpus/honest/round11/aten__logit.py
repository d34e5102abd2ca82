"""aten::logit in Triton.

    logit(p) = log(p / (1 - p)),   p clamped to [eps, 1 - eps] when eps is given.

Half-precision inputs are computed in float32 (float64 stays float64) and
rounded once on the store.  The input is read through its strides, so any view
(transposed, sliced, expanded, 0-d) works without a copy; the output is dense.
"""
import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

_BLOCK = 4096
_MAX_RANK = 8


def _on_gpu_backend() -> bool:
    # libdevice calls are lowered by the GPU backends only; the CPU interpreter
    # cannot execute extern elementwise functions.
    return not triton.knobs.runtime.interpret


@triton.jit
def _strided_offset(lin, shape, strides, RANK: tl.constexpr):
    off = tl.zeros_like(lin)
    rem = lin
    for d in tl.static_range(RANK - 1, -1, -1):
        off += (rem % shape[d]) * strides[d]
        rem = rem // shape[d]
    return off


@triton.heuristics({
    "HAS_EPS": lambda args: args["eps"] is not None,
    "USE_LIBDEVICE": lambda args: _on_gpu_backend(),
})
@triton.jit(do_not_specialize=["n_elements", "eps"])
def _logit_kernel(x_ptr, out_ptr, n_elements, eps, shape, strides,
                  RANK: tl.constexpr, HAS_EPS: tl.constexpr, USE_LIBDEVICE: tl.constexpr,
                  BLOCK: tl.constexpr):
    tl.static_assert(RANK >= 1 and RANK <= 8, "rank out of range")
    tl.static_assert(BLOCK % 128 == 0, "BLOCK must be a multiple of 128")
    lin = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    mask = lin < n_elements
    x = tl.load(x_ptr + _strided_offset(lin, shape, strides, RANK), mask=mask, other=0.5)
    if x.dtype == tl.float64:
        p = x
    else:
        p = x.to(tl.float32)
    if HAS_EPS:
        lo = eps
        hi = 1.0 - eps
        # where() rather than min/max: NaN must stay NaN, like torch's clamp
        p = tl.where(p < lo, lo, tl.where(p > hi, hi, p))
    ratio = p / (1.0 - p)
    if USE_LIBDEVICE:
        y = libdevice.log(ratio)
    else:
        y = tl.log(ratio)
    tl.store(out_ptr + lin, y.to(out_ptr.dtype.element_ty), mask=mask)


def logit(self: torch.Tensor, eps: float | None = None) -> torch.Tensor:
    if not self.is_floating_point():
        raise TypeError(f"logit: expected a floating point tensor, got {self.dtype}")
    if self.dim() > _MAX_RANK:
        raise NotImplementedError(f"logit: rank {self.dim()} > {_MAX_RANK}")
    out = torch.empty(self.shape, dtype=self.dtype, device=self.device)
    n = out.numel()
    shape = tuple(max(1, s) for s in self.shape) or (1,)
    strides = tuple(self.stride()) or (0,)
    grid = (max(1, triton.cdiv(n, _BLOCK)),)
    _logit_kernel[grid](self, out, n, None if eps is None else float(eps), shape, strides,
                        RANK=len(shape), BLOCK=_BLOCK)
    return out
