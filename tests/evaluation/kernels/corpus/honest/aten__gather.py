import torch
import triton
import triton.language as tl


@triton.jit
def gather_kernel(src, idx, out, numel, i1, i2, ss0, ss1, ss2, is0, is1, is2, BLOCK: tl.constexpr):
    """(before, dim, after) views: out[a, b, c] = src[a, index[a, b, c], c]."""
    p = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = p < numel
    c = p % i2
    b = (p // i2) % i1
    a = p // (i2 * i1)
    j = tl.load(idx + a * is0 + b * is1 + c * is2, mask=m, other=0)
    v = tl.load(src + a * ss0 + j * ss1 + c * ss2, mask=m)
    tl.store(out + p, v, mask=m)


def _fold3(t, dim):
    """t as (before, t.shape[dim], after): the gathered dim in the middle (a copy only if no view exists)."""
    if t.dim() == 0:
        return t.reshape(1, 1, 1)
    before = 1
    for s in t.shape[:dim]:
        before *= s
    after = 1
    for s in t.shape[dim + 1:]:
        after *= s
    return t.reshape(before, t.shape[dim], after)


def gather(self, dim, index, *, sparse_grad=False):
    dim = dim % max(self.dim(), 1)
    out = torch.empty(index.shape, dtype=self.dtype, device=self.device)
    numel = out.numel()
    if numel == 0:
        return out
    # index may be smaller than self in the non-gathered dims: view self restricted to index's extent
    window = self
    for d in range(self.dim()):
        if d != dim and index.shape[d] != self.shape[d]:
            window = window.narrow(d, 0, index.shape[d])
    src3 = _fold3(window, dim)
    idx3 = _fold3(index, dim)
    gather_kernel[(triton.cdiv(numel, 256),)](
        src3, idx3, out, numel, idx3.shape[1], idx3.shape[2], *src3.stride(), *idx3.stride(), BLOCK=256)
    return out
