import torch
import triton
import triton.language as tl

# ---------------------------------------------------------------------------
# Layout / dtype helpers (metadata only: shapes, strides, dtypes)
# ---------------------------------------------------------------------------
_MAX_DIMS = 8

_KIND_BOOL = 0
_KIND_INT = 1
_KIND_FLOAT = 2

_HALF_TYPES = (torch.float16, torch.bfloat16)


def _kind(dtype):
    if dtype == torch.bool:
        return _KIND_BOOL
    if dtype.is_floating_point:
        return _KIND_FLOAT
    if dtype.is_complex:
        raise NotImplementedError("_to_copy: complex dtypes are not supported")
    return _KIND_INT


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
# Kernels
# ---------------------------------------------------------------------------
@triton.jit
def _f32_to_bf16_rne(x):
    # fp32 -> bf16 with round-to-nearest-even done on the bits, so the result
    # is exact on every backend (the CPU interpreter's plain cast truncates).
    bits = x.to(tl.uint32, bitcast=True)
    lsb = (bits >> 16) & 1
    rounded = (bits + 0x7FFF + lsb) >> 16
    rounded = tl.where(x != x, 0x7FC0, rounded)  # canonical quiet NaN
    return rounded.to(tl.uint16).to(tl.bfloat16, bitcast=True)


@triton.heuristics({
    "BLOCK_SIZE": lambda args: _block_size(args["n_elements"]),
})
@triton.jit
def _to_copy_kernel(
    x_ptr, y_ptr, n_elements,
    s0, s1, s2, s3, s4, s5, s6, s7,
    xa0, xa1, xa2, xa3, xa4, xa5, xa6, xa7,
    ya0, ya1, ya2, ya3, ya4, ya5, ya6, ya7,
    CONTIG: tl.constexpr,
    SRC_KIND: tl.constexpr,     # 0 bool, 1 int, 2 float
    DST_KIND: tl.constexpr,     # 0 bool, 1 int, 2 float
    SAME_DTYPE: tl.constexpr,
    VIA_F32: tl.constexpr,      # narrow to fp16/bf16 through fp32 like c10 does
    SRC_BF16: tl.constexpr,
    DST_BF16: tl.constexpr,
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
    dst_ty = y_ptr.dtype.element_ty

    if SAME_DTYPE:
        y = x
    else:
        if SRC_BF16:
            # widen bf16 exactly to fp32 before anything else
            x = x.to(tl.float32)
        if DST_KIND == 0:
            # anything -> bool is x != 0 (NaN != 0 is True)
            y = x != 0
        elif DST_KIND == 1:
            if SRC_KIND == 2:
                # float -> int truncates toward zero; go through int64 so that
                # narrow targets (uint8, int8, ...) wrap like c10's cast does
                if x.dtype != tl.float64:
                    x = x.to(tl.float32)
                y = x.to(tl.int64).to(dst_ty)
            else:
                y = x.to(dst_ty)
        else:
            # -> float, rounding to nearest even. c10 narrows fp64 / int to
            # fp16 / bf16 through fp32, so do the same.
            if VIA_F32:
                x = x.to(tl.float32)
            if DST_BF16:
                y = _f32_to_bf16_rne(x)
            else:
                y = x.to(dst_ty)

    tl.store(y_ptr + y_off, y.to(dst_ty), mask=mask)


# ---------------------------------------------------------------------------
# Wrapper
# ---------------------------------------------------------------------------
def _to_copy(self, *, dtype=None, layout=None, device=None, pin_memory=None,
             non_blocking=False, memory_format=None):
    x = self
    dst_dtype = x.dtype if dtype is None else dtype
    if memory_format is None:
        memory_format = torch.preserve_format
    out = torch.empty_like(x, dtype=dst_dtype, memory_format=memory_format)

    n = x.numel()
    shape, xs, ys = _coalesce(list(x.shape), list(x.stride()), list(out.stride()))
    if len(shape) > _MAX_DIMS:
        out = torch.empty(x.shape, dtype=dst_dtype, device=x.device)
        x = x.contiguous()
        shape, xs, ys = _coalesce(list(x.shape), list(x.stride()), list(out.stride()))
    contig = len(shape) == 1 and xs[0] == 1 and ys[0] == 1
    shape = _pad(shape, 1)
    xs = _pad(xs, 0)
    ys = _pad(ys, 0)

    src_kind = _kind(x.dtype)
    dst_kind = _kind(dst_dtype)
    via_f32 = dst_dtype in _HALF_TYPES  # any -> fp16/bf16 narrows through fp32

    grid = lambda meta: (max(1, triton.cdiv(n, meta["BLOCK_SIZE"])),)
    _to_copy_kernel[grid](
        x, out, n,
        *shape, *xs, *ys,
        CONTIG=contig,
        SRC_KIND=src_kind,
        DST_KIND=dst_kind,
        SAME_DTYPE=x.dtype == dst_dtype,
        VIA_F32=via_f32,
        SRC_BF16=x.dtype == torch.bfloat16,
        DST_BF16=dst_dtype == torch.bfloat16,
    )
    return out
