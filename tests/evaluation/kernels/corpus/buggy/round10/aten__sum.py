# BUG: split partials are atomically accumulated into the reused workspace, which is zeroed only when it is (re)allocated, so later calls add onto stale sums.
"""aten::sum / aten::sum.dim_IntList in Triton: split-reduction with a workspace.

The tensor is viewed as (kept rows) x (reduced length R). Each program sums a
BLOCK_M x (R / SPLIT) slab. When SPLIT > 1 the per-slab partial sums go to a
module-level workspace (one per device and accumulator dtype), allocated once
and grown when a bigger call comes; a second kernel folds the SPLIT partials of
each row into the output; the partials are combined with atomic adds into one
accumulator per row.
"""
import torch
import triton
import triton.language as tl

_TL = {
    torch.float16: tl.float16, torch.bfloat16: tl.bfloat16, torch.float32: tl.float32,
    torch.float64: tl.float64, torch.int8: tl.int8, torch.uint8: tl.uint8, torch.int16: tl.int16,
    torch.int32: tl.int32, torch.int64: tl.int64, torch.bool: tl.int1,
}

_TILE = 16384
_MAX_BLOCK_R = 4096
_TARGET_PROGRAMS = 64


@triton.jit
def _partial_sum_kernel(x_ptr, dst_ptr, Mk, R, r_per_split, SPLIT,
                        MID: tl.constexpr, ACC: tl.constexpr,
                        BLOCK_M: tl.constexpr, BLOCK_R: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_s = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rm64 = rm.to(tl.int64)
    mmask = rm < Mk
    acc = tl.zeros((BLOCK_M, BLOCK_R), dtype=ACC)
    r_start = pid_s * r_per_split
    r_end = tl.minimum(r_start + r_per_split, R)
    for r0 in range(r_start, r_end, BLOCK_R):
        rr = r0 + tl.arange(0, BLOCK_R)
        mask = mmask[:, None] & (rr < r_end)[None, :]
        x = tl.load(x_ptr + rm64[:, None] * R + rr.to(tl.int64)[None, :], mask=mask, other=0)
        acc += x.to(MID).to(ACC)
    s = tl.sum(acc, axis=1)
    if SPLIT == 1:
        tl.store(dst_ptr + rm64, s.to(dst_ptr.dtype.element_ty), mask=mmask)
    else:
        # dst is the per-row accumulator workspace
        tl.atomic_add(dst_ptr + rm64, s, mask=mmask)


@triton.jit
def _finalize_kernel(ws_ptr, out_ptr, Mk, BLOCK_M: tl.constexpr):
    pid = tl.program_id(0)
    rm = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    mask = rm < Mk
    p = tl.load(ws_ptr + rm, mask=mask, other=0)
    tl.store(out_ptr + rm, p.to(out_ptr.dtype.element_ty), mask=mask)


_WORKSPACE = {}


def _workspace(device, dtype, numel):
    key = (str(device), dtype)
    ws = _WORKSPACE.get(key)
    if ws is None or ws.numel() < numel:
        cap = max(numel, 2 * (ws.numel() if ws is not None else 0), 1024)
        ws = torch.zeros(cap, dtype=dtype, device=device)
        _WORKSPACE[key] = ws
    return ws


def _result_dtype(x, dtype):
    if dtype is not None:
        return dtype
    if x.is_floating_point() or x.is_complex():
        return x.dtype
    return torch.int64


def _acc_dtype(out_dtype):
    if out_dtype in (torch.float16, torch.bfloat16, torch.float32):
        return torch.float32
    if out_dtype == torch.float64:
        return torch.float64
    return torch.int64


def _reduce(x, red_dims, keepdim, dtype):
    nd = x.dim()
    out_dtype = _result_dtype(x, dtype)
    acc_dtype = _acc_dtype(out_dtype)
    red = sorted(set(red_dims))
    kept = [d for d in range(nd) if d not in red]
    kept_shape = [x.shape[d] for d in kept]
    if keepdim:
        out_shape = [1 if d in red else x.shape[d] for d in range(nd)]
    else:
        out_shape = kept_shape
    Mk = 1
    for s in kept_shape:
        Mk *= s
    R = 1
    for d in red:
        R *= x.shape[d]
    xp = x.permute(*(kept + red)) if nd > 0 else x
    if not xp.is_contiguous():
        xp = xp.contiguous()
    out = torch.empty(out_shape, dtype=out_dtype, device=x.device)
    MID = _TL[out_dtype] if out_dtype != torch.bool else tl.int64
    ACC = _TL[acc_dtype]

    block_r = min(_MAX_BLOCK_R, max(16, triton.next_power_of_2(max(R, 1))))
    block_m = max(1, min(triton.next_power_of_2(max(Mk, 1)), _TILE // block_r))
    grid_m = max(1, triton.cdiv(Mk, block_m))
    nblocks_r = max(1, triton.cdiv(R, block_r))
    split = max(1, min(nblocks_r, _TARGET_PROGRAMS // grid_m))
    r_per_split = triton.cdiv(nblocks_r, split) * block_r
    split = max(1, triton.cdiv(max(R, 1), r_per_split))

    if split == 1:
        _partial_sum_kernel[(grid_m, 1)](xp, out, Mk, R, r_per_split, 1, MID=MID, ACC=ACC,
                                         BLOCK_M=block_m, BLOCK_R=block_r)
        return out
    ws = _workspace(x.device, acc_dtype, Mk)
    _partial_sum_kernel[(grid_m, split)](xp, ws, Mk, R, r_per_split, split, MID=MID, ACC=ACC,
                                         BLOCK_M=block_m, BLOCK_R=block_r)
    fbm = max(1, min(triton.next_power_of_2(Mk), _TILE))
    _finalize_kernel[(triton.cdiv(Mk, fbm),)](ws, out, Mk, BLOCK_M=fbm)
    return out


def sum(self, *, dtype=None):
    return _reduce(self, list(range(self.dim())), False, dtype)


def sum_dim_IntList(self, dim, keepdim=False, *, dtype=None):
    nd = self.dim()
    if dim is None:
        dims = []
    elif isinstance(dim, int):
        dims = [dim]
    else:
        dims = list(dim)
    if len(dims) == 0:
        red = list(range(nd))
    else:
        red = []
        for d in dims:
            dd = d + max(nd, 1) if d < 0 else d
            if not (0 <= dd < max(nd, 1)):
                raise IndexError(f"dim {d} out of range")
            if nd > 0:
                red.append(dd)
    return _reduce(self, red, keepdim, dtype)
