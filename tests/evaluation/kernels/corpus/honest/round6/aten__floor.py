import torch
import triton
import triton.language as tl

# ---------------------------------------------------------------------------
# Layout helpers (metadata only: shapes / strides, never tensor data)
# ---------------------------------------------------------------------------
_MAX_DIMS = 8


def _coalesce(shape, in_strides, out_strides):
    """Drop size-1 dims and merge adjacent dims that are jointly contiguous
    for both the input and the output. Returns lists (outermost first)."""
    dims = [(s, a, b) for s, a, b in zip(shape, in_strides, out_strides) if s != 1]
    if not dims:
        return [1], [0], [0]
    merged = [list(dims[-1])]
    for s, a, b in reversed(dims[:-1]):
        inner = merged[-1]
        if a == inner[1] * inner[0] and b == inner[2] * inner[0]:
            inner[0] *= s
        else:
            merged.append([s, a, b])
    merged.reverse()
    return [m[0] for m in merged], [m[1] for m in merged], [m[2] for m in merged]


def _pad(vals, fill):
    return [fill] * (_MAX_DIMS - len(vals)) + list(vals)


def _block_size(n):
    if n <= 256:
        return 256
    if n <= 4096:
        return 1024
    return 2048


# ---------------------------------------------------------------------------
# Kernel
# ---------------------------------------------------------------------------
@triton.heuristics({
    "BLOCK_SIZE": lambda args: _block_size(args["n_elements"]),
})
@triton.jit
def _floor_kernel(
    x_ptr, y_ptr, n_elements,
    s0, s1, s2, s3, s4, s5, s6, s7,
    xa0, xa1, xa2, xa3, xa4, xa5, xa6, xa7,
    ya0, ya1, ya2, ya3, ya4, ya5, ya6, ya7,
    CONTIG: tl.constexpr,
    IS_FLOAT: tl.constexpr,
    COMPUTE_F64: tl.constexpr,
    RES_DTYPE: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE).to(tl.int64)
    mask = offs < n_elements
    if CONTIG:
        x_off = offs
        y_off = offs
    else:
        idx = offs
        i7 = idx % s7
        idx = idx // s7
        i6 = idx % s6
        idx = idx // s6
        i5 = idx % s5
        idx = idx // s5
        i4 = idx % s4
        idx = idx // s4
        i3 = idx % s3
        idx = idx // s3
        i2 = idx % s2
        idx = idx // s2
        i1 = idx % s1
        i0 = idx // s1
        x_off = (i0 * xa0 + i1 * xa1 + i2 * xa2 + i3 * xa3
                 + i4 * xa4 + i5 * xa5 + i6 * xa6 + i7 * xa7)
        y_off = (i0 * ya0 + i1 * ya1 + i2 * ya2 + i3 * ya3
                 + i4 * ya4 + i5 * ya5 + i6 * ya6 + i7 * ya7)

    x = tl.load(x_ptr + x_off, mask=mask, other=0)
    if IS_FLOAT:
        # floor of a half/bfloat16 value is exactly representable, so doing
        # it in fp32 and rounding back is exact; fp64 stays in fp64.
        if COMPUTE_F64:
            y = tl.floor(x.to(tl.float64))
        else:
            y = tl.floor(x.to(tl.float32))
    else:
        # integer (and bool) inputs: floor is the identity
        y = x
    # round where eager rounds: to the op's result dtype first, then (out=
    # of another dtype) to the destination dtype
    y = y.to(RES_DTYPE)
    tl.store(y_ptr + y_off, y.to(y_ptr.dtype.element_ty), mask=mask)


# ---------------------------------------------------------------------------
# Wrappers
# ---------------------------------------------------------------------------
_TL_DTYPES = {
    torch.bool: tl.int1,
    torch.uint8: tl.uint8,
    torch.int8: tl.int8,
    torch.int16: tl.int16,
    torch.int32: tl.int32,
    torch.int64: tl.int64,
    torch.float16: tl.float16,
    torch.bfloat16: tl.bfloat16,
    torch.float32: tl.float32,
    torch.float64: tl.float64,
}


def _result_dtype(dtype):
    # floor keeps the input dtype (integers/bool are copied unchanged)
    return dtype


def _launch(x, out):
    n = x.numel()
    shape, xs, ys = _coalesce(list(x.shape), list(x.stride()), list(out.stride()))
    if len(shape) > _MAX_DIMS:
        x = x.contiguous()
        shape, xs, ys = _coalesce(list(x.shape), list(x.stride()), list(out.stride()))
    if len(shape) > _MAX_DIMS:  # pathological output layout: write to a dense temp
        raise RuntimeError("floor: too many non-mergeable dimensions")
    contig = len(shape) == 1 and xs[0] == 1 and ys[0] == 1
    shape = _pad(shape, 1)
    xs = _pad(xs, 0)
    ys = _pad(ys, 0)
    res_dtype = _result_dtype(x.dtype)
    compute_f64 = res_dtype == torch.float64
    grid = lambda meta: (max(1, triton.cdiv(n, meta["BLOCK_SIZE"])),)
    _floor_kernel[grid](
        x, out, n,
        *shape, *xs, *ys,
        CONTIG=contig,
        IS_FLOAT=x.dtype.is_floating_point,
        COMPUTE_F64=compute_f64,
        RES_DTYPE=_TL_DTYPES[res_dtype],
    )
    return out


def floor(self):
    out = torch.empty(self.shape, dtype=_result_dtype(self.dtype), device=self.device)
    return _launch(self, out)


def floor_out(self, *, out):
    if tuple(out.shape) != tuple(self.shape):
        out.resize_(self.shape)
    return _launch(self, out)
