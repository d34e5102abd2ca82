import torch
import triton
import triton.language as tl


@triton.jit
def _bitwise_not_kernel(inp, outp, n, stride_r, stride_c, ncols, IS_BOOL: tl.constexpr, ALL_ONES: tl.constexpr,
                        BLOCK: tl.constexpr):
    k = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = k < n
    r = k // ncols
    c = k % ncols
    v = tl.load(inp + r * stride_r + c * stride_c, mask=inside)
    if IS_BOOL:
        res = v == 0  # logical not for bool storage
    else:
        res = v ^ ALL_ONES
    tl.store(outp + k, res, mask=inside)


# XOR with every bit set; unsigned types need the positive spelling of that mask
_ALL_ONES = {torch.uint8: 0xFF}


def _matrix(x):
    if x.dim() == 0:
        return x.reshape(1, 1)
    if x.dim() == 1:
        return x.unsqueeze(0)
    if x.dim() == 2:
        return x
    return x.reshape(-1, x.shape[-1])


def bitwise_not(self):
    if self.dtype.is_floating_point:
        raise TypeError("bitwise_not is only defined for integer and bool tensors")
    out = torch.empty(self.shape, dtype=self.dtype, device=self.device)
    return bitwise_not_out(self, out=out)


def bitwise_not_out(self, *, out):
    n = self.numel()
    if n == 0:
        return out
    m = _matrix(self)
    dst = out if out.is_contiguous() else torch.empty(self.shape, dtype=out.dtype, device=out.device)
    _bitwise_not_kernel[(triton.cdiv(n, 256),)](
        m, dst, n, m.stride(0), m.stride(1), m.shape[1], IS_BOOL=self.dtype == torch.bool,
        ALL_ONES=_ALL_ONES.get(self.dtype, -1), BLOCK=256)
    if dst is not out:
        out.copy_(dst)
    return out
