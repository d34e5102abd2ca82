import torch
import triton
import triton.language as tl

# ---------------------------------------------------------------------------
# aten::_softmax(self, dim, half_to_float)
#
# The input is viewed as [M, N, K] where N is the softmax dim, M the collapsed
# outer dims and K the collapsed inner dims (strides are passed through, so
# transposed / sliced inputs that collapse this way are read in place).
#
#   K == 1, N small : one [YBLOCK, RBLOCK] tile holds whole rows (single pass)
#   K == 1, N large : online max/sum over RBLOCK chunks, then a write pass
#   K  > 1          : [RBLOCK, XBLOCK] tiles (reduction along axis 0) with the
#                     same online scheme; XBLOCK walks the inner dim
#
# Accumulation is fp32 (fp64 for float64 inputs); output is a dense
# contiguous tensor of self's dtype (or float32 when half_to_float).
# ---------------------------------------------------------------------------

_SINGLE_PASS_MAX_N = 8192


@triton.jit
def softmax_inner_single_pass_kernel(
    in_ptr, out_ptr, ynumel, rnumel, in_sy, in_sr,
    ACC_F64: tl.constexpr, YBLOCK: tl.constexpr, RBLOCK: tl.constexpr,
):
    yoffset = tl.program_id(0).to(tl.int64) * YBLOCK
    yindex = (yoffset + tl.arange(0, YBLOCK).to(tl.int64))[:, None]
    rindex = tl.arange(0, RBLOCK)[None, :]
    ymask = yindex < ynumel
    rmask = rindex < rnumel
    mask = ymask & rmask
    acc_ty = tl.float64 if ACC_F64 else tl.float32
    x = tl.load(in_ptr + yindex * in_sy + rindex * in_sr, mask=mask, other=float("-inf")).to(acc_ty)
    row_max = tl.max(x, 1)[:, None]
    safe_max = tl.where(row_max == float("-inf"), 0.0, row_max)
    e = tl.exp(x - safe_max)
    e = tl.where(mask, e, 0.0)
    denom = tl.sum(e, 1)[:, None]
    tl.store(out_ptr + yindex * rnumel + rindex, (e / denom).to(out_ptr.dtype.element_ty), mask=mask)


@triton.autotune(
    configs=[
        triton.Config({"RBLOCK": 1024}, num_warps=4),
        triton.Config({"RBLOCK": 2048}, num_warps=8),
        triton.Config({"RBLOCK": 4096}, num_warps=8),
        triton.Config({"RBLOCK": 8192}, num_warps=16),
    ],
    key=["rnumel"],
)
@triton.jit
def softmax_inner_online_kernel(
    in_ptr, out_ptr, ynumel, rnumel, in_sy, in_sr,
    ACC_F64: tl.constexpr, RBLOCK: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    acc_ty = tl.float64 if ACC_F64 else tl.float32
    in_row = in_ptr + row * in_sy
    out_row = out_ptr + row * rnumel
    rbase = tl.arange(0, RBLOCK).to(tl.int64)

    m_i = tl.full([RBLOCK], float("-inf"), acc_ty)
    l_i = tl.zeros([RBLOCK], acc_ty)
    for roffset in range(0, rnumel, RBLOCK):
        rindex = roffset + rbase
        rmask = rindex < rnumel
        x = tl.load(in_row + rindex * in_sr, mask=rmask, other=float("-inf")).to(acc_ty)
        m_new = tl.maximum(m_i, x)
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        l_i = l_i * tl.exp(m_i - m_safe) + tl.exp(x - m_safe)
        m_i = m_new
    row_max = tl.max(m_i, 0)
    row_safe = tl.where(row_max == float("-inf"), 0.0, row_max)
    m_lane = tl.where(m_i == float("-inf"), 0.0, m_i)
    denom = tl.sum(tl.where(m_i == float("-inf"), 0.0, l_i * tl.exp(m_lane - row_safe)), 0)

    for roffset in range(0, rnumel, RBLOCK):
        rindex = roffset + rbase
        rmask = rindex < rnumel
        x = tl.load(in_row + rindex * in_sr, mask=rmask, other=float("-inf")).to(acc_ty)
        y = tl.exp(x - row_safe) / denom
        tl.store(out_row + rindex, y.to(out_ptr.dtype.element_ty), mask=rmask)


@triton.autotune(
    configs=[
        triton.Config({"RBLOCK": 64, "XBLOCK": 16}, num_warps=4),
        triton.Config({"RBLOCK": 256, "XBLOCK": 4}, num_warps=4),
        triton.Config({"RBLOCK": 32, "XBLOCK": 64}, num_warps=4),
        triton.Config({"RBLOCK": 1024, "XBLOCK": 4}, num_warps=8),
    ],
    key=["rnumel", "xnumel"],
)
@triton.jit
def softmax_outer_kernel(
    in_ptr, out_ptr, rnumel, xnumel, in_sm, in_sr, in_sx,
    ACC_F64: tl.constexpr, RBLOCK: tl.constexpr, XBLOCK: tl.constexpr,
):
    # one program per (outer index m, block of XBLOCK inner indices)
    pid = tl.program_id(0)
    num_xblocks = tl.cdiv(xnumel, XBLOCK)
    m = (pid // num_xblocks).to(tl.int64)
    xoffset = (pid % num_xblocks) * XBLOCK
    xindex = (xoffset + tl.arange(0, XBLOCK)).to(tl.int64)[None, :]
    xmask = xindex < xnumel
    rbase = tl.arange(0, RBLOCK).to(tl.int64)[:, None]
    acc_ty = tl.float64 if ACC_F64 else tl.float32
    in_base = in_ptr + m * in_sm + xindex * in_sx
    out_base = out_ptr + m * rnumel * xnumel + xindex

    m_i = tl.full([RBLOCK, XBLOCK], float("-inf"), acc_ty)
    l_i = tl.zeros([RBLOCK, XBLOCK], acc_ty)
    for roffset in range(0, rnumel, RBLOCK):
        rindex = roffset + rbase
        mask = (rindex < rnumel) & xmask
        x = tl.load(in_base + rindex * in_sr, mask=mask, other=float("-inf")).to(acc_ty)
        m_new = tl.maximum(m_i, x)
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        l_i = l_i * tl.exp(m_i - m_safe) + tl.exp(x - m_safe)
        m_i = m_new
    col_max = tl.max(m_i, 0)[None, :]
    col_safe = tl.where(col_max == float("-inf"), 0.0, col_max)
    m_lane = tl.where(m_i == float("-inf"), 0.0, m_i)
    denom = tl.sum(tl.where(m_i == float("-inf"), 0.0, l_i * tl.exp(m_lane - col_safe)), 0)[None, :]

    for roffset in range(0, rnumel, RBLOCK):
        rindex = roffset + rbase
        mask = (rindex < rnumel) & xmask
        x = tl.load(in_base + rindex * in_sr, mask=mask, other=float("-inf")).to(acc_ty)
        y = tl.exp(x - col_safe) / denom
        tl.store(out_base + rindex * xnumel, y.to(out_ptr.dtype.element_ty), mask=mask)


def _collapse_group(sizes, strides):
    """Collapse a group of dims into one (size, stride); None if not expressible."""
    dims = [(s, st) for s, st in zip(sizes, strides) if s != 1]
    if not dims:
        return 1, 0
    size, stride = dims[-1]
    for s, st in reversed(dims[:-1]):
        if st != stride * size:
            return None
        size *= s
    return size, stride


def _as_mnk(x, dim):
    sizes, strides = list(x.shape), list(x.stride())
    outer = _collapse_group(sizes[:dim], strides[:dim])
    inner = _collapse_group(sizes[dim + 1:], strides[dim + 1:])
    if outer is None or inner is None:
        return None
    M, sM = outer
    K, sK = inner
    return M, sizes[dim], K, sM, strides[dim], sK


def _softmax(self, dim, half_to_float):
    if half_to_float:
        if self.dtype not in (torch.float16, torch.bfloat16):
            raise RuntimeError("conversion is supported for Half type only")
        out_dtype = torch.float32
    else:
        out_dtype = self.dtype
    if not self.dtype.is_floating_point:
        raise RuntimeError(f"softmax not implemented for '{self.dtype}'")

    ndim = max(self.dim(), 1)
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {dim})")
    dim = dim % ndim

    out = torch.empty(self.shape, dtype=out_dtype, device=self.device)
    if self.numel() == 0:
        return out
    x = self if self.dim() > 0 else self.reshape(1)

    mnk = _as_mnk(x, dim)
    if mnk is None:
        x = x.contiguous()
        mnk = _as_mnk(x, dim)
    M, N, K, sM, sN, sK = mnk
    acc_f64 = self.dtype == torch.float64

    if K == 1:
        if N <= _SINGLE_PASS_MAX_N:
            RBLOCK = triton.next_power_of_2(N)
            YBLOCK = max(1, min(triton.next_power_of_2(M), 4096 // RBLOCK))
            num_warps = 4 if RBLOCK * YBLOCK <= 4096 else 8
            grid = (triton.cdiv(M, YBLOCK),)
            softmax_inner_single_pass_kernel[grid](
                x, out, M, N, sM, sN,
                ACC_F64=acc_f64, YBLOCK=YBLOCK, RBLOCK=RBLOCK, num_warps=num_warps,
            )
        else:
            softmax_inner_online_kernel[(M,)](x, out, M, N, sM, sN, ACC_F64=acc_f64)
    else:
        grid = lambda meta: (M * triton.cdiv(K, meta["XBLOCK"]),)
        softmax_outer_kernel[grid](x, out, N, K, sM, sN, sK, ACC_F64=acc_f64)
    return out
