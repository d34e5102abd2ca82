# aten::add -- pointwise with broadcasting, FlagGems-like layout: operands are broadcast with
# torch.broadcast_tensors and read through their (possibly zero) strides in a rank-4 index space.
import torch
import triton
import triton.language as tl

RANK = 4


def _to_rank(t: torch.Tensor):
    """Collapse leading dims so the view fits in RANK dims, then left-pad sizes/strides."""
    sizes, strides = list(t.shape), list(t.stride())
    while len(sizes) > RANK:
        # merging the two outermost dims is only valid if they are jointly strided
        if strides[0] == strides[1] * sizes[1]:
            sizes[0:2] = [sizes[0] * sizes[1]]
            strides[0:2] = [strides[1]]
        else:
            return None
    pad = RANK - len(sizes)
    return [1] * pad + sizes, [0] * pad + strides


@triton.jit
def add_kernel(
    a_ptr, b_ptr, c_ptr, alpha, N,
    D1, D2, D3,
    sa0, sa1, sa2, sa3,
    sb0, sb1, sb2, sb3,
    B_IS_SCALAR: tl.constexpr, COMPUTE_F32: tl.constexpr, BLOCK_SIZE: tl.constexpr,
):
    pid = tl.program_id(axis=0)
    idx = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    live = idx < N
    i3 = idx % D3
    t = idx // D3
    i2 = t % D2
    t = t // D2
    i1 = t % D1
    i0 = t // D1
    a = tl.load(a_ptr + i0 * sa0 + i1 * sa1 + i2 * sa2 + i3 * sa3, mask=live)
    if B_IS_SCALAR:
        b = b_ptr
    else:
        b = tl.load(b_ptr + i0 * sb0 + i1 * sb1 + i2 * sb2 + i3 * sb3, mask=live)
    if COMPUTE_F32:
        res = a.to(tl.float32) + alpha * b.to(tl.float32)
    else:
        res = a + alpha * b
    # the output is freshly allocated and contiguous
    tl.store(c_ptr + idx, res.to(c_ptr.dtype.element_ty), mask=live)


def _launch(a: torch.Tensor, b, alpha) -> torch.Tensor:
    scalar = not isinstance(b, torch.Tensor)
    if scalar:
        a_b = a
    else:
        a_b, b = torch.broadcast_tensors(a, b)
    out = torch.empty(a_b.shape, dtype=a.dtype, device=a.device)
    n = out.numel()
    if n == 0:
        return out
    ra = _to_rank(a_b)
    if ra is None:
        a_b = a_b.contiguous()
        ra = _to_rank(a_b)
    if scalar:
        rb = ([1] * RANK, [0] * RANK)
    else:
        rb = _to_rank(b)
        if rb is None:
            b = b.contiguous()
            rb = _to_rank(b)
    sizes = ra[0]
    grid = (triton.cdiv(n, 512),)
    add_kernel[grid](
        a_b, b, out, alpha, n,
        sizes[1], sizes[2], sizes[3],
        *ra[1], *rb[1],
        B_IS_SCALAR=scalar, COMPUTE_F32=a.dtype.is_floating_point, BLOCK_SIZE=512,
    )
    return out


def add_Tensor(self, other, *, alpha=1):
    return _launch(self, other, alpha)


def add_Scalar(self, other, alpha=1):
    return _launch(self, other, alpha)
