import torch
import triton
import triton.language as tl

_MAXD = 6


@triton.jit
def _coord(rem, S):
    return rem % S, rem // S


@triton.jit
def _index_select_kernel(src_base, src_off, idx, idx_stride, out, numel,
                         S0, S1, S2, S3, S4, S5,
                         T0, T1, T2, T3, T4, T5,
                         DIM: tl.constexpr, BLOCK: tl.constexpr):
    # src_base points at element 0 of self's storage; src_off = storage_offset.
    # S*: output sizes (padded to 6 dims, leading 1s); T*: self's element strides
    # (with T[DIM] the stride of the selected dim).
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < numel
    rem = offs
    c5, rem = _coord(rem, S5)
    c4, rem = _coord(rem, S4)
    c3, rem = _coord(rem, S3)
    c2, rem = _coord(rem, S2)
    c1, rem = _coord(rem, S1)
    c0 = rem
    if DIM == 0:
        cd = c0
    elif DIM == 1:
        cd = c1
    elif DIM == 2:
        cd = c2
    elif DIM == 3:
        cd = c3
    elif DIM == 4:
        cd = c4
    else:
        cd = c5
    sel = tl.load(idx + cd * idx_stride, mask=mask, other=0).to(tl.int64)
    # stride of the selected dim is applied to the looked-up index instead of cd
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
    a = src_off + c0 * T0 + c1 * T1 + c2 * T2 + c3 * T3 + c4 * T4 + c5 * T5
    v = tl.load(src_base + a, mask=mask)
    tl.store(out + offs, v, mask=mask)


def index_select(self, dim, index):
    nd = self.dim()
    if nd == 0:
        sizes, strides, d = [1], [0], 0
    else:
        d = dim % nd
        sizes, strides = list(self.shape), list(self.stride())
    count = index.numel()
    out_sizes = list(sizes)
    out_sizes[d] = count
    out_shape = tuple(out_sizes) if nd > 0 else ()
    out = torch.empty(out_shape, dtype=self.dtype, device=self.device)
    numel = out.numel()

    if len(sizes) > _MAXD:
        # fold the trailing dims after the selected one into a single dim
        x = self.contiguous()
        outer = list(x.shape[:d])
        inner = 1
        for s in x.shape[d + 1:]:
            inner *= s
        x = x.view(outer + [x.shape[d], inner])
        sizes, strides = list(x.shape), list(x.stride())
        out_sizes = outer + [count, inner]
        if len(sizes) > _MAXD:
            raise NotImplementedError("rank too large")
        src = x
    else:
        src = self

    pad = _MAXD - len(sizes)
    S = [1] * pad + [max(v, 1) for v in out_sizes]  # numel == 0 masks everything
    T = [0] * pad + strides
    DIM = d + pad

    # address self through its untyped storage: base = element 0 of the storage,
    # everything else from storage_offset() and stride().
    esz = src.element_size()
    storage_elems = src.untyped_storage().nbytes() // esz
    base = src.as_strided((storage_elems,), (1,), 0) if storage_elems > 0 else src
    src_off = src.storage_offset()

    idx_flat = index.reshape(-1)
    idx_stride = idx_flat.stride(0) if idx_flat.numel() > 0 else 1

    BLOCK = 2048
    grid = (max(1, triton.cdiv(numel, BLOCK)),)
    _index_select_kernel[grid](base, src_off, idx_flat, idx_stride, out, numel,
                               *S, *T, DIM=DIM, BLOCK=BLOCK)
    return out
