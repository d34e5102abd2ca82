# aten::zero_ -- in place, written through self's strides.
import torch
import triton
import triton.language as tl


@triton.jit
def triton_poi_fill_zero_flat(out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xoffset = tl.program_id(0).to(tl.int64) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)
    xmask = xindex < xnumel
    tmp0 = tl.full([XBLOCK], 0, out_ptr0.dtype.element_ty)
    tl.store(out_ptr0 + xindex, tmp0, xmask)


@triton.jit
def triton_poi_fill_zero_strided(out_ptr0, xnumel, ks1, ks2, ks3, st0, st1, st2, st3,
                                 XBLOCK: tl.constexpr):
    xoffset = tl.program_id(0).to(tl.int64) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)
    xmask = xindex < xnumel
    x3 = xindex % ks3
    x2 = (xindex // ks3) % ks2
    x1 = (xindex // (ks3 * ks2)) % ks1
    x0 = xindex // (ks3 * ks2 * ks1)
    tmp0 = tl.full([XBLOCK], 0, out_ptr0.dtype.element_ty)
    tl.store(out_ptr0 + (x0 * st0 + x1 * st1 + x2 * st2 + x3 * st3), tmp0, xmask)


def _non_overlapping_and_dense(t: torch.Tensor) -> bool:
    # dense permutation of a contiguous block (e.g. a transposed contiguous tensor)
    dims = sorted((st, sz) for sz, st in zip(t.shape, t.stride()) if sz != 1)
    expected = 1
    for st, sz in dims:
        if st != expected:
            return False
        expected *= sz
    return True


def _fold(sizes, strides):
    ks, st = [], []
    for s, d in zip(sizes, strides):
        if s == 1:
            continue
        if ks and st[-1] == s * d:
            ks[-1] *= s
            st[-1] = d
        else:
            ks.append(s)
            st.append(d)
    return ks, st


def _launch_strided(t: torch.Tensor) -> None:
    ks, st = _fold(list(t.shape), list(t.stride()))
    if len(ks) > 4:
        for i in range(t.shape[0]):
            _launch_strided(t[i])
        return
    ks = [1] * (4 - len(ks)) + ks
    st = [0] * (4 - len(st)) + st
    xnumel = t.numel()
    XBLOCK = 1024
    triton_poi_fill_zero_strided[(max(triton.cdiv(xnumel, XBLOCK), 1),)](
        t, xnumel, ks[1], ks[2], ks[3], st[0], st[1], st[2], st[3], XBLOCK=XBLOCK)


def zero_(self: torch.Tensor) -> torch.Tensor:
    xnumel = self.numel()
    if self.is_contiguous() or _non_overlapping_and_dense(self):
        # every element of the dense block is part of self: treat it as flat storage
        XBLOCK = 1024 if xnumel >= 1024 else max(triton.next_power_of_2(xnumel), 16)
        triton_poi_fill_zero_flat[(max(triton.cdiv(xnumel, XBLOCK), 1),)](self, xnumel, XBLOCK=XBLOCK)
    else:
        _launch_strided(self)
    return self
