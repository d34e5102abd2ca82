import torch
import triton
import triton.language as tl


@triton.jit
def _cumsum_kernel(
    x_ptr, out_ptr,
    C, L, INNER,
    ACC_DTYPE: tl.constexpr,
    BLOCK_L: tl.constexpr,
    BLOCK_C: tl.constexpr,
):
    # column c = (o, i) of the (outer, L, inner) view; scan runs along L
    pid = tl.program_id(0)
    cols = pid * BLOCK_C + tl.arange(0, BLOCK_C)
    col_mask = cols < C
    o = cols // INNER
    i = cols % INNER
    base = o * L * INNER + i

    carry = tl.zeros([BLOCK_C], dtype=ACC_DTYPE)
    for start in range(0, L, BLOCK_L):
        rows = start + tl.arange(0, BLOCK_L)
        mask = (rows[:, None] < L) & col_mask[None, :]
        ptrs = base[None, :] + rows[:, None] * INNER
        x = tl.load(x_ptr + ptrs, mask=mask, other=0).to(ACC_DTYPE)
        acc = tl.cumsum(x, axis=0) + carry[None, :]
        tl.store(out_ptr + ptrs, acc.to(out_ptr.dtype.element_ty), mask=mask)
        carry = tl.sum(x, axis=0)


def _acc_dtype(dt):
    if dt == torch.float64:
        return tl.float64
    if dt.is_floating_point:
        return tl.float32
    return tl.int64


def cumsum(self, dim, *, dtype=None):
    if dtype is None:
        if self.dtype.is_floating_point or self.dtype.is_complex:
            dtype = self.dtype
        else:
            dtype = torch.int64
    out = torch.empty(self.shape, dtype=dtype, device=self.device)
    x = self.contiguous()
    if x.dim() == 0:
        x = x.view(1)
    ndim = x.dim()
    dim = dim % ndim
    shape = list(x.shape)
    L = shape[dim]
    inner = 1
    for s in shape[dim + 1:]:
        inner *= s
    outer = 1
    for s in shape[:dim]:
        outer *= s
    C = outer * inner
    if C * L == 0:
        return out
    BLOCK_L = min(triton.next_power_of_2(L), 64)
    BLOCK_C = max(4096 // BLOCK_L, 16)
    acc = _acc_dtype(dtype)
    grid = (triton.cdiv(C, BLOCK_C),)
    _cumsum_kernel[grid](x, out, C, L, inner, ACC_DTYPE=acc, BLOCK_L=BLOCK_L, BLOCK_C=BLOCK_C)
    return out
