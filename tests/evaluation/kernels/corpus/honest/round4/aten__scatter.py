import torch
import triton
import triton.language as tl


# ---------------------------------------------------------------------------
# Kernels
#
# Shapes and strides of arbitrary rank are passed as Python tuples; the
# kernels unroll over them with tl.static_range, so any rank works without
# padding the metadata to a fixed maximum.
# ---------------------------------------------------------------------------


@triton.jit
def _strided_copy_kernel(
    src_ptr, dst_ptr, numel,
    sizes, src_strides,
    NDIM: tl.constexpr, BLOCK: tl.constexpr,
):
    # dst is contiguous with shape `sizes`; src is an arbitrary strided view
    pid = tl.program_id(0).to(tl.int64)
    lin = pid * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    mask = lin < numel
    rem = lin
    src_off = tl.zeros([BLOCK], dtype=tl.int64)
    for d in tl.static_range(NDIM - 1, -1, -1):
        c = rem % sizes[d]
        rem = rem // sizes[d]
        src_off += c * src_strides[d]
    v = tl.load(src_ptr + src_off, mask=mask)
    tl.store(dst_ptr + lin, v, mask=mask)


@triton.jit
def _scatter_kernel(
    out_ptr, index_ptr, src_ptr, value, numel,
    idx_sizes, idx_strides, src_strides, out_strides,
    dim_size,
    DIM: tl.constexpr, NDIM: tl.constexpr,
    HAS_SRC: tl.constexpr, BLOCK: tl.constexpr,
):
    # one lane per element of `index`
    pid = tl.program_id(0).to(tl.int64)
    lin = pid * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    mask = lin < numel
    rem = lin
    idx_off = tl.zeros([BLOCK], dtype=tl.int64)
    src_off = tl.zeros([BLOCK], dtype=tl.int64)
    out_off = tl.zeros([BLOCK], dtype=tl.int64)
    for d in tl.static_range(NDIM - 1, -1, -1):
        c = rem % idx_sizes[d]
        rem = rem // idx_sizes[d]
        idx_off += c * idx_strides[d]
        if HAS_SRC:
            src_off += c * src_strides[d]
        if d != DIM:
            out_off += c * out_strides[d]
    target = tl.load(index_ptr + idx_off, mask=mask, other=0).to(tl.int64)
    # torch rejects out-of-range indices; we simply never write outside the tensor
    ok = mask & (target >= 0) & (target < dim_size)
    out_off += target * out_strides[DIM]
    if HAS_SRC:
        v = tl.load(src_ptr + src_off, mask=ok)
    else:
        # broadcast the runtime scalar; its own type (fp32 / i32 / i64) is kept
        v = tl.zeros([BLOCK], dtype=tl.int8) + value
    tl.store(out_ptr + out_off, v.to(out_ptr.dtype.element_ty), mask=ok)


# ---------------------------------------------------------------------------
# Host helpers
# ---------------------------------------------------------------------------

_BLOCK = 1024


def _contig_strides(shape):
    strides = []
    acc = 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= s
    return tuple(reversed(strides))


def _as_at_least_1d(t):
    return t.reshape(1) if t.dim() == 0 else t


def _prepare(self, dim, index):
    x = _as_at_least_1d(self)
    idx = _as_at_least_1d(index)
    ndim = x.dim()
    if idx.dim() != ndim:
        raise RuntimeError("scatter: index must have the same number of dims as self")
    if not -ndim <= dim < ndim:
        raise IndexError("scatter: dim out of range")
    dim = dim % ndim
    if idx.dtype not in (torch.int64, torch.int32):
        raise RuntimeError("scatter: index must be an integer tensor")
    out = torch.empty(tuple(x.shape), dtype=x.dtype, device=x.device)
    # copy self into the fresh output (always launches, even for empty tensors)
    numel = x.numel()
    grid = (max(1, triton.cdiv(numel, _BLOCK)),)
    sizes = tuple(x.shape) if numel > 0 else (1,) * ndim
    _strided_copy_kernel[grid](
        x, out, numel, sizes, tuple(x.stride()),
        NDIM=ndim, BLOCK=_BLOCK,
    )
    return x, idx, out, dim


def _launch_scatter(out, dim, idx, src, value):
    ndim = out.dim()
    n = idx.numel()
    if n == 0:
        return
    out_strides = _contig_strides(out.shape)
    has_src = src is not None
    src_strides = tuple(src.stride()) if has_src else (0,) * ndim
    grid = (triton.cdiv(n, _BLOCK),)
    _scatter_kernel[grid](
        out, idx, src if has_src else out, value, n,
        tuple(idx.shape), tuple(idx.stride()), src_strides, out_strides,
        out.shape[dim],
        DIM=dim, NDIM=ndim, HAS_SRC=has_src, BLOCK=_BLOCK,
    )


# ---------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------

def scatter_src(self, dim, index, src):
    x, idx, out, d = _prepare(self, dim, index)
    s = _as_at_least_1d(src)
    if s.dtype != x.dtype:
        raise RuntimeError("scatter: src and self must have the same dtype")
    _launch_scatter(out, d, idx, s, 0.0)
    return out.view(self.shape)


def scatter_value(self, dim, index, value):
    x, idx, out, d = _prepare(self, dim, index)
    if isinstance(value, torch.Tensor):
        value = value.item()
    if x.dtype.is_floating_point or x.dtype.is_complex:
        value = float(value)
    else:
        # integral / bool outputs: keep the scalar integral so it is not rounded through fp32
        value = int(value)
    _launch_scatter(out, d, idx, None, value)
    return out.view(self.shape)
