import torch
import triton
import triton.language as tl

_SINGLE_PASS_MAX = 4096   # rows up to this length are done in one tile
_CHUNK = 4096             # split size for long rows

# scratch for the (max, sum) partials of the split path; kept between calls
# and fully rewritten by _partials_kernel before it is read each call.
_scratch = {}


def _get_scratch(n, dtype, device):
    key = (device, dtype)
    buf = _scratch.get(key)
    if buf is None or buf.numel() < n:
        buf = torch.empty(max(n, 1024), dtype=dtype, device=device)
        _scratch[key] = buf
    return buf


@triton.jit
def _row_base(rows, B1, B2, B3, s0, s1, s2, s3):
    # row index -> element offset through up to 4 batch dims (sizes B0..B3)
    r = rows.to(tl.int64)
    c3 = r % B3
    r = r // B3
    c2 = r % B2
    r = r // B2
    c1 = r % B1
    c0 = r // B1
    return c0 * s0 + c1 * s1 + c2 * s2 + c3 * s3


@triton.jit
def _softmax_tile_kernel(x, out, R, N, B1, B2, B3,
                         xs0, xs1, xs2, xs3, xsn,
                         os0, os1, os2, os3, osn,
                         OUT_DT: tl.constexpr, ACC_DT: tl.constexpr,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    rmask = rows < R
    xb = _row_base(rows, B1, B2, B3, xs0, xs1, xs2, xs3)
    ob = _row_base(rows, B1, B2, B3, os0, os1, os2, os3)
    cols = tl.arange(0, BLOCK_N).to(tl.int64)
    m2 = rmask[:, None] & (cols < N)[None, :]
    v = tl.load(x + xb[:, None] + cols[None, :] * xsn, mask=m2, other=float("-inf"))
    v = v.to(OUT_DT).to(ACC_DT)
    mx = tl.max(v, axis=1)
    e = tl.exp(v - mx[:, None])
    s = tl.sum(e, axis=1)
    y = e / s[:, None]
    tl.store(out + ob[:, None] + cols[None, :] * osn, y.to(OUT_DT), mask=m2)


@triton.jit
def _partials_kernel(x, part, R, N, NSPLIT, B1, B2, B3,
                     xs0, xs1, xs2, xs3, xsn,
                     OUT_DT: tl.constexpr, ACC_DT: tl.constexpr, CHUNK: tl.constexpr):
    row = tl.program_id(0)
    sp = tl.program_id(1)
    xb = _row_base(row, B1, B2, B3, xs0, xs1, xs2, xs3)
    cols = sp.to(tl.int64) * CHUNK + tl.arange(0, CHUNK)
    msk = cols < N
    v = tl.load(x + xb + cols * xsn, mask=msk, other=float("-inf"))
    v = v.to(OUT_DT).to(ACC_DT)
    mx = tl.max(v, axis=0)
    shift = tl.where(mx == float("-inf"), 0.0, mx)
    s = tl.sum(tl.exp(v - shift), axis=0)
    p = part + (row.to(tl.int64) * NSPLIT + sp) * 2
    tl.store(p, mx.to(ACC_DT))
    tl.store(p + 1, s.to(ACC_DT))


@triton.jit
def _normalize_kernel(x, out, part, R, N, NSPLIT, B1, B2, B3,
                      xs0, xs1, xs2, xs3, xsn,
                      os0, os1, os2, os3, osn,
                      OUT_DT: tl.constexpr, ACC_DT: tl.constexpr,
                      CHUNK: tl.constexpr, SPLIT_P2: tl.constexpr):
    row = tl.program_id(0)
    sp = tl.program_id(1)
    ks = tl.arange(0, SPLIT_P2)
    kmask = ks < NSPLIT
    pbase = part + row.to(tl.int64) * NSPLIT * 2
    pm = tl.load(pbase + ks * 2, mask=kmask, other=float("-inf"))
    ps = tl.load(pbase + ks * 2 + 1, mask=kmask, other=0.0)
    M = tl.max(pm, axis=0)
    M_shift = tl.where(M == float("-inf"), 0.0, M)
    S = tl.sum(ps * tl.exp(pm - M_shift), axis=0)
    xb = _row_base(row, B1, B2, B3, xs0, xs1, xs2, xs3)
    ob = _row_base(row, B1, B2, B3, os0, os1, os2, os3)
    cols = sp.to(tl.int64) * CHUNK + tl.arange(0, CHUNK)
    msk = cols < N
    v = tl.load(x + xb + cols * xsn, mask=msk, other=float("-inf"))
    v = v.to(OUT_DT).to(ACC_DT)
    y = tl.exp(v - M) / S
    tl.store(out + ob + cols * osn, y.to(OUT_DT), mask=msk)


_TL = {torch.float16: tl.float16, torch.bfloat16: tl.bfloat16,
       torch.float32: tl.float32, torch.float64: tl.float64}


def _dense_strides_like(t):
    n = t.dim()
    sizes, strides = list(t.shape), list(t.stride())
    order = sorted(range(n), key=lambda i: (strides[i], -i))
    expected, dense = 1, True
    for i in order:
        if sizes[i] != 1 and strides[i] != expected:
            dense = False
            break
        expected *= sizes[i]
    res, acc = [0] * n, 1
    for i in (order if dense else reversed(range(n))):
        res[i] = acc
        acc *= sizes[i]
    return res


def softmax_int(self, dim, dtype=None):
    out_dtype = dtype if dtype is not None else self.dtype
    acc_dtype = torch.float64 if out_dtype == torch.float64 else torch.float32
    x = self if self.dim() > 0 else self.view(1)
    d = dim % x.dim()
    out_full = torch.empty_strided(tuple(self.shape), _dense_strides_like(self),
                                   dtype=out_dtype, device=self.device)
    out = out_full if out_full.dim() > 0 else out_full.view(1)

    if x.dim() > 5:
        # too many batch dims for the stride decomposition: go through a
        # contiguous [outer, N, inner] view (output allocated row-major to match)
        xc = x.contiguous()
        N = xc.shape[d]
        outer = 1
        for sz in xc.shape[:d]:
            outer *= sz
        inner = 1
        for sz in xc.shape[d + 1:]:
            inner *= sz
        out_full = torch.empty(tuple(self.shape), dtype=out_dtype, device=self.device)
        x = xc.view(outer, N, inner)
        out_work = out_full.view(outer, N, inner)
        d = 1
    else:
        out_work = out

    xm = x.movedim(d, -1)
    om = out_work.movedim(d, -1)
    N = xm.shape[-1]
    bsz = list(xm.shape[:-1])
    pad = 4 - len(bsz)
    B = [1] * pad + bsz
    XS = [0] * pad + list(xm.stride()[:-1])
    OS = [0] * pad + list(om.stride()[:-1])
    xsn, osn = xm.stride(-1), om.stride(-1)
    R = 1
    for b in bsz:
        R *= b
    Bk = [max(b, 1) for b in B]
    OUT_DT, ACC_DT = _TL[out_dtype], _TL[acc_dtype]

    if N <= _SINGLE_PASS_MAX or R == 0:
        BLOCK_N = triton.next_power_of_2(max(N, 1))
        BLOCK_M = max(1, min(2048, 8192 // BLOCK_N))
        grid = (max(1, triton.cdiv(R, BLOCK_M)),)
        _softmax_tile_kernel[grid](xm, om, R, N, Bk[1], Bk[2], Bk[3],
                                   *XS, xsn, *OS, osn,
                                   OUT_DT=OUT_DT, ACC_DT=ACC_DT,
                                   BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
    else:
        nsplit = triton.cdiv(N, _CHUNK)
        part = _get_scratch(R * nsplit * 2, acc_dtype, self.device)
        grid = (R, nsplit)
        _partials_kernel[grid](xm, part, R, N, nsplit, Bk[1], Bk[2], Bk[3],
                               *XS, xsn, OUT_DT=OUT_DT, ACC_DT=ACC_DT, CHUNK=_CHUNK)
        _normalize_kernel[grid](xm, om, part, R, N, nsplit, Bk[1], Bk[2], Bk[3],
                                *XS, xsn, *OS, osn,
                                OUT_DT=OUT_DT, ACC_DT=ACC_DT, CHUNK=_CHUNK,
                                SPLIT_P2=triton.next_power_of_2(nsplit))

    return out_full
