import torch
import triton
import triton.language as tl

_MAXD = 6


@triton.jit
def _gather_kernel(src, idx, out, numel,
                   S0, S1, S2, S3, S4, S5,          # index / output sizes
                   A0, A1, A2, A3, A4, A5,          # self strides (elements)
                   I0, I1, I2, I3, I4, I5,          # index strides
                   O0, O1, O2, O3, O4, O5,          # out strides
                   DIM: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < numel
    rem = offs
    c5 = rem % S5
    rem = rem // S5
    c4 = rem % S4
    rem = rem // S4
    c3 = rem % S3
    rem = rem // S3
    c2 = rem % S2
    rem = rem // S2
    c1 = rem % S1
    c0 = rem // S1
    i_addr = c0 * I0 + c1 * I1 + c2 * I2 + c3 * I3 + c4 * I4 + c5 * I5
    o_addr = c0 * O0 + c1 * O1 + c2 * O2 + c3 * O3 + c4 * O4 + c5 * O5
    sel = tl.load(idx + i_addr, mask=mask, other=0).to(tl.int64)
    if DIM == 0:
        c0 = sel
    elif DIM == 1:
        c1 = sel
    elif DIM == 2:
        c2 = sel
    elif DIM == 3:
        c3 = sel
    elif DIM == 4:
        c4 = sel
    else:
        c5 = sel
    s_addr = c0 * A0 + c1 * A1 + c2 * A2 + c3 * A3 + c4 * A4 + c5 * A5
    v = tl.load(src + s_addr, mask=mask)
    tl.store(out + o_addr, v, mask=mask)


def _dense_strides_like(t):
    """Strides of a dense tensor with t's memory order, like empty_like's
    preserve_format; falls back to row-major for overlapping/broadcast inputs."""
    n = t.dim()
    if n == 0:
        return []
    sizes, strides = list(t.shape), list(t.stride())
    order = sorted(range(n), key=lambda i: (strides[i], -i))  # innermost first
    expected = 1
    dense = True
    for i in order:
        if sizes[i] != 1 and strides[i] != expected:
            dense = False
            break
        expected *= sizes[i]
    if dense:
        out = [0] * n
        acc = 1
        for i in order:
            out[i] = acc
            acc *= sizes[i]
        return out
    out = [0] * n
    acc = 1
    for i in reversed(range(n)):
        out[i] = acc
        acc *= sizes[i]
    return out


def gather(self, dim, index, *, sparse_grad=False):
    nd = max(self.dim(), 1)
    d = dim % nd
    out = torch.empty_strided(tuple(index.shape), _dense_strides_like(index),
                              dtype=self.dtype, device=self.device)
    numel = out.numel()

    src = self if self.dim() > 0 else self.view(1)
    ix = index if index.dim() > 0 else index.view(1)
    ov = out if out.dim() > 0 else out.view(1)
    if ix.dim() > _MAXD:
        raise NotImplementedError("gather: rank > 6")

    pad = _MAXD - ix.dim()
    S = [1] * pad + [max(s, 1) for s in ix.shape]   # numel == 0 masks all lanes
    A = [0] * pad + list(src.stride())
    I = [0] * pad + list(ix.stride())
    O = [0] * pad + list(ov.stride())

    BLOCK = 2048
    grid = (max(1, triton.cdiv(numel, BLOCK)),)
    _gather_kernel[grid](src, ix, ov, numel, *S, *A, *I, *O,
                         DIM=d + pad, BLOCK=BLOCK)
    return out
